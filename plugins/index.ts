// The plugins Plumb ships, by the name `-plugins` takes for them. Each is a folder whose index.ts
// default-exports definePlugin({...}), written against the plugin API (lib/plugins/api.ts), as a
// third party's would be. Plugins of others are named by package or by path.
import type { FirstPartyPlugins } from '../lib/plugins/loader.ts';

export const FIRST_PARTY_PLUGINS: FirstPartyPlugins = {
  ai: () => import('./ai/index.ts'),
  archives: () => import('./archives/index.ts'),
  'search-console': () => import('./search-console/index.ts'),
};
