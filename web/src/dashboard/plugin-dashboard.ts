// What the node's plugins add to the dashboard (GET /api/dashboard/plugins), fetched once and
// shared by the site dashboard, the site settings, the menu and the plugins' own pages: it only
// changes when the node restarts with other plugins.
import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { SITE_RANK, type SiteRole } from '../../../lib/auth/roles.ts';
import type { ValueFormat } from './plugin-values.ts';

export type { SiteRole };

/**
 * Whether a person with `role` on the site may use what asks for `required` (the least role its
 * route allows): the dashboard draws only what would not answer "forbidden".
 */
export const reaches = (required: SiteRole | undefined, role: SiteRole | undefined) => required === undefined || (role !== undefined && SITE_RANK[role] >= SITE_RANK[required]);

export interface PanelColumn {
  key: string;
  label: string;
  numeric?: boolean;
  format?: ValueFormat;
}

/** A button that POSTs to a plugin's route (`{site}` for the site's id) and shows the answer's `message`. */
export interface PluginAction {
  id: string;
  label: string;
  route: string;
  confirm?: string;
  /** The browser goes on to the answer's `url` (an OAuth consent screen, say). */
  opens_url?: boolean;
  /** On a site's dashboard: the least site role its route allows. */
  role?: SiteRole;
  /** In a settings section: drawn only while the section's answer has `field` equal to one of `in`. */
  shown_when?: { field: string; in: unknown[] };
}

/** A button on each row of a table panel: its route's `{field}` segments (but the site's) are filled from the row. */
export interface RowAction {
  id: string;
  label: string;
  method: 'POST' | 'DELETE';
  route: string;
  confirm?: string;
  danger?: boolean;
  role?: SiteRole;
}

export interface SitePanel {
  plugin: string;
  id: string;
  title: string;
  kind: 'table' | 'kpis';
  route: string;
  empty?: string;
  /** Read the route again every this many seconds while the page is visible. */
  refresh_seconds?: number;
  items?: string;
  columns?: PanelColumn[];
  kpis?: { key: string; label: string; format?: ValueFormat }[];
  row_actions?: RowAction[];
  /** On a site's dashboard: the least site role its route allows. */
  role?: SiteRole;
  /** Buttons above the panel, POSTing the dashboard's range as `{ from, to }`. */
  actions?: PluginAction[];
}

export interface FormField {
  type: 'string' | 'integer' | 'boolean' | 'array';
  title: string;
  description?: string;
  enum?: string[];
  /** The read-only array field of the section's answer whose values are the choices. */
  choicesFrom?: string;
  /** Read (for a button's condition or a field's choices), never shown. */
  hidden?: boolean;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  nullable?: boolean;
  /** A value the plugin reports: shown, never edited, never sent back. */
  readOnly?: boolean;
  format?: ValueFormat;
}

export interface SiteSettingsSection {
  plugin: string;
  id: string;
  title: string;
  description?: string;
  route: string;
  schema: { type: 'object'; properties: Record<string, FormField>; required?: string[] };
  actions: PluginAction[];
}

export interface AdminPage {
  plugin: string;
  title: string;
  nav_label: string;
  actions: PluginAction[];
  panels: SitePanel[];
}

export interface PluginDashboard {
  site_panels: SitePanel[];
  site_settings: SiteSettingsSection[];
  admin_pages: AdminPage[];
}

export function usePluginDashboard(options: { enabled?: boolean } = {}) {
  return useQuery({
    queryKey: ['plugin-dashboard'],
    queryFn: () => api<PluginDashboard>('/api/dashboard/plugins'),
    enabled: options.enabled ?? true,
    staleTime: Number.POSITIVE_INFINITY,
  });
}

/** A plugin's route as a page calls it: on a site's pages, `{site}` (the first segment in braces) is the site's id. */
export const onSite = (route: string, siteId?: string) => (siteId === undefined ? route : route.replace('{site}', encodeURIComponent(siteId)));

const ROW_FIELD = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A row action's route with each `{field}` filled from the row, URL-encoded; null when the row lacks one of them. */
export function rowRoute(route: string, row: Record<string, unknown>): string | null {
  let lacking = false;
  const filled = route.replace(ROW_FIELD, (_, field: string) => {
    const value = row[field];
    if ((typeof value !== 'string' && typeof value !== 'number') || value === '') lacking = true;
    return encodeURIComponent(String(value));
  });
  return lacking ? null : filled;
}

/** Gives the focus back to `element` when it was lost on the way (a button disabled while it ran, a row drawn again). */
export function refocus(element: HTMLElement | null | undefined) {
  if (element?.isConnected && (document.activeElement === null || document.activeElement === document.body)) element.focus();
}
