// A form's submit handler: the page stays where it is (no browser submission), then `action` runs.
import type { FormEvent } from 'react';
import { api } from './api.ts';

export const submitHandler = (action: () => void) => (e: FormEvent) => {
  e.preventDefault();
  action();
};

/**
 * Saves an edit form of a site's goal or funnel: an existing one gets a PATCH of only what changed
 * (nothing changed: no call, and null); a new one is POSTed. The answer names the saved item `key`.
 */
export async function saveItem<T extends { id: string }>(collection: string, key: string, existing: T | undefined, changes: (item: T) => Record<string, unknown>, created: () => unknown): Promise<T | null> {
  if (existing) {
    const body = changes(existing);
    if (Object.keys(body).length === 0) return null;
    return (await api<Record<string, T>>(`${collection}/${existing.id}`, { method: 'PATCH', body }))[key];
  }
  return (await api<Record<string, T>>(collection, { method: 'POST', body: created() }))[key];
}

/**
 * What someone pastes as a site's address, as the domain Plumb keys the site by: the scheme, port,
 * credentials, path, query and a leading "www." dropped, lower case ("https://Shop.Example.com/",
 * "shop.example.com/path?q" and "www.shop.example.com" all become "shop.example.com"). Text that
 * is no address at all is returned trimmed, for the server to name the problem.
 */
export function cleanDomain(input: string): string {
  const text = input.trim();
  if (text === '') return '';
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let host: string;
  try {
    host = new URL(withScheme).hostname;
  } catch {
    return text;
  }
  host = host.replace(/\.$/, '').toLowerCase();
  // Browsers take spaces and the like into a host, escaped; no domain has them.
  if (!/^[a-z0-9.-]+$/.test(host)) return text;
  return host.startsWith('www.') ? host.slice(4) : host;
}
