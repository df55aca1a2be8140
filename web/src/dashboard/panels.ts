// The dashboard's breakdown panels and their tabs, in order; the first tab of each is what a
// dashboard load asks for (the dashboard benchmark fires exactly these).
import type { BreakdownResponse } from '../api.ts';

export interface Tab {
  label: string;
  dimension: BreakdownResponse['dimension'];
  filter: string;
}

export const PANELS: { title: string; tabs: Tab[] }[] = [
  {
    title: 'Pages',
    tabs: [
      { label: 'Top pages', dimension: 'pages', filter: 'page' },
      { label: 'Entry pages', dimension: 'entry_pages', filter: 'entry_page' },
      { label: 'Exit pages', dimension: 'exit_pages', filter: 'exit_page' },
    ],
  },
  {
    title: 'Sources',
    tabs: [
      { label: 'Sources', dimension: 'sources', filter: 'source' },
      { label: 'Referrers', dimension: 'referrers', filter: 'referrer' },
      { label: 'Channels', dimension: 'channels', filter: 'channel' },
      // Sources of visits whose channel is AI assistants (ChatGPT, Perplexity, Claude …).
      { label: 'AI assistants', dimension: 'ai_assistants', filter: 'source' },
    ],
  },
  {
    title: 'Campaigns',
    tabs: [
      { label: 'Source', dimension: 'utm_source', filter: 'utm_source' },
      { label: 'Medium', dimension: 'utm_medium', filter: 'utm_medium' },
      { label: 'Campaign', dimension: 'utm_campaign', filter: 'utm_campaign' },
      { label: 'Term', dimension: 'utm_term', filter: 'utm_term' },
      { label: 'Content', dimension: 'utm_content', filter: 'utm_content' },
    ],
  },
  {
    title: 'Locations',
    tabs: [
      { label: 'Countries', dimension: 'countries', filter: 'country' },
      { label: 'Regions', dimension: 'regions', filter: 'region' },
    ],
  },
  {
    title: 'Devices',
    tabs: [
      { label: 'Devices', dimension: 'devices', filter: 'device' },
      { label: 'Browsers', dimension: 'browsers', filter: 'browser' },
      { label: 'Operating systems', dimension: 'os', filter: 'os' },
    ],
  },
];
