// A site page of one panel over a date range the person picks (goals, funnels): the site's frame,
// a range picker without realtime, then the panel for that range.
import type { ReactNode } from 'react';
import type { Site } from '../api.ts';
import { RangePicker } from '../dashboard/RangePicker.tsx';
import type { DateRange } from '../dashboard/range.ts';
import { useDashboardState } from '../dashboard/state.ts';
import { SiteFrame } from './SiteFrame.tsx';

type Panel = (site: Site, range: DateRange) => ReactNode;

function RangeView({ site, panel }: { site: Site; panel: Panel }) {
  const state = useDashboardState(site.timezone);
  return (
    <div className="dashboard">
      <div className="toolbar">
        <RangePicker key={state.period} period={state.period === 'realtime' ? 'today' : state.period} range={state.range} onChange={state.setPeriod} realtime={false} timezone={site.timezone} />
      </div>
      {panel(site, state.range)}
    </div>
  );
}

export function SiteRangePage({ title, children }: { title: string; children: Panel }) {
  return <SiteFrame title={title}>{(site) => <RangeView site={site} panel={children} />}</SiteFrame>;
}
