// The plugins a node runs, for instance administrators: each with its version, the plugin API it
// targets, where it was loaded from and the routes it adds; and plugins whose data is kept while
// they are not enabled.
import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { ListTable } from './ListTable.tsx';

interface PluginEntry {
  name: string;
  status: 'running' | 'disabled';
  version: string | null;
  api_version: number | null;
  description: string | null;
  source: string | null;
  routes: string[];
}

export function PluginsCard() {
  const plugins = useQuery({ queryKey: ['admin-plugins'], queryFn: () => api<{ plugins: PluginEntry[] }>('/api/admin/plugins') });
  const list = plugins.data?.plugins ?? [];
  return (
    <section className="card stack" aria-labelledby="plugins" data-testid="plugins-card">
      <h2 id="plugins">Plugins</h2>
      {plugins.isError && <p className="error">{plugins.error.message}</p>}
      {plugins.data && list.length === 0 && (
        <p className="muted">
          No plugins are enabled. Name them in <code>PLUMB_PLUGINS</code> (a plugin Plumb ships, a package or a path) and restart.
        </p>
      )}
      {list.length > 0 && (
        <ListTable columns={['Plugin', 'Status', 'Version', 'Loaded from', 'Routes']} label="Plugins">
          {list.map((p) => (
            <tr key={p.name}>
              <th scope="row">
                {p.name}
                {p.description && <div className="muted">{p.description}</div>}
              </th>
              <td className="nowrap">{p.status === 'running' ? 'Running' : 'Not enabled (data kept)'}</td>
              <td className="nowrap">{p.version ? `${p.version} (plugin API ${p.api_version})` : '—'}</td>
              <td>{p.source ? <code>{p.source}</code> : '—'}</td>
              <td>
                {p.routes.length === 0
                  ? '—'
                  : p.routes.map((route) => (
                      <div key={route}>
                        <code>{route}</code>
                      </div>
                    ))}
              </td>
            </tr>
          ))}
        </ListTable>
      )}
    </section>
  );
}
