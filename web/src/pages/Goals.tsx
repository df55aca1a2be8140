// Goals of a site with their conversions in the chosen range.
import { GoalsPanel } from '../components/Goals.tsx';
import { SiteRangePage } from '../components/SiteRangePage.tsx';

export default function Goals() {
  return (
    <SiteRangePage title="Goals">
      {(site, range) => (
        <section className="card stack">
          <h2>Goals</h2>
          <GoalsPanel siteId={site.id} canEdit={site.role !== 'viewer'} range={range} />
        </section>
      )}
    </SiteRangePage>
  );
}
