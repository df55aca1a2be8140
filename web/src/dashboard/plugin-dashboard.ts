// What the node's plugins add to the dashboard (GET /api/dashboard/plugins), fetched once and
// shared by the site dashboard, the site settings, the menu and the plugins' own pages: it only
// changes when the node restarts with other plugins.
import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';

export interface PanelColumn {
  key: string;
  label: string;
  numeric?: boolean;
}

export interface SitePanel {
  plugin: string;
  id: string;
  title: string;
  kind: 'table' | 'kpis';
  route: string;
  empty?: string;
  items?: string;
  columns?: PanelColumn[];
  kpis?: { key: string; label: string }[];
}

export interface FormField {
  type: 'string' | 'integer' | 'boolean';
  title: string;
  description?: string;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  nullable?: boolean;
}

export interface SiteSettingsSection {
  plugin: string;
  id: string;
  title: string;
  description?: string;
  route: string;
  schema: { type: 'object'; properties: Record<string, FormField>; required?: string[] };
  actions: { id: string; label: string; route: string; confirm?: string }[];
}

export interface AdminPage {
  plugin: string;
  title: string;
  nav_label: string;
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
