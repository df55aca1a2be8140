// Funnels of a site with the steps reached in the chosen range.
import { FunnelsPanel } from '../components/Funnels.tsx';
import { SiteRangePage } from '../components/SiteRangePage.tsx';

export default function Funnels() {
  return <SiteRangePage title="Funnels">{(site, range) => <FunnelsPanel siteId={site.id} canEdit={site.role !== 'viewer'} range={range} />}</SiteRangePage>;
}
