// What AI crawlers and assistants fetched from a site, and the visits AI assistants referred to it, over a range.
import { SiteRangePage } from '../components/SiteRangePage.tsx';
import { AiCrawlersView } from '../dashboard/AiCrawlersView.tsx';

export default function AiCrawlers() {
  return <SiteRangePage title="AI crawlers">{(site, range) => <AiCrawlersView siteId={site.id} range={range} timezone={site.timezone} />}</SiteRangePage>;
}
