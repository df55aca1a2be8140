// The site dashboard for signed-in people.
import { SiteFrame } from '../components/SiteFrame.tsx';
import { DashboardView } from '../dashboard/DashboardView.tsx';

export default function SiteDashboard() {
  return <SiteFrame title="Dashboard">{(site) => <DashboardView base={`/api/sites/${site.id}`} timezone={site.timezone} role={site.role} />}</SiteFrame>;
}
