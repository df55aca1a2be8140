// Goals of a site with their conversions in the chosen range.
import { GoalsPanel } from '../components/Goals.tsx';
import { SiteFrame } from '../components/SiteFrame.tsx';
import { RangePicker } from '../dashboard/RangePicker.tsx';
import { useDashboardState } from '../dashboard/state.ts';
import type { Site } from '../api.ts';

function GoalsView({ site }: { site: Site }) {
  const state = useDashboardState(site.timezone);
  return (
    <div className="dashboard">
      <div className="toolbar">
        <RangePicker key={state.period} period={state.period === 'realtime' ? 'today' : state.period} range={state.range} onChange={state.setPeriod} realtime={false} />
      </div>
      <section className="card">
        <h2>Goals</h2>
        <GoalsPanel siteId={site.id} canEdit={site.role !== 'viewer'} range={state.range} />
      </section>
    </div>
  );
}

export default function Goals() {
  return <SiteFrame title="Goals">{(site) => <GoalsView site={site} />}</SiteFrame>;
}
