// The events explorer of a site for signed-in people.
import { SiteFrame } from '../components/SiteFrame.tsx';
import { EventsView } from '../dashboard/EventsView.tsx';

export default function Events() {
  return <SiteFrame title="Events">{(site) => <EventsView base={`/api/sites/${site.id}`} timezone={site.timezone} />}</SiteFrame>;
}
