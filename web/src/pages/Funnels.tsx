// Funnels of a site with the steps reached in the chosen range.
import type { Site } from '../api.ts';
import { FunnelsPanel } from '../components/Funnels.tsx';
import { SiteFrame } from '../components/SiteFrame.tsx';
import { RangePicker } from '../dashboard/RangePicker.tsx';
import { useDashboardState } from '../dashboard/state.ts';

function FunnelsView({ site }: { site: Site }) {
  const state = useDashboardState(site.timezone);
  return (
    <div className="dashboard">
      <div className="toolbar">
        <RangePicker key={state.period} period={state.period === 'realtime' ? 'today' : state.period} range={state.range} onChange={state.setPeriod} realtime={false} />
      </div>
      <FunnelsPanel siteId={site.id} canEdit={site.role !== 'viewer'} range={state.range} />
    </div>
  );
}

export default function Funnels() {
  return <SiteFrame title="Funnels">{(site) => <FunnelsView site={site} />}</SiteFrame>;
}
