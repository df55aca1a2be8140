// "● 3 current visitors" beside the range: the people seen in the last five minutes, asked for
// again every 30 seconds while the page is visible. Where the realtime view is reachable it links
// there. The count comes with any stats answer whatever its range, so the smallest range (the
// last minute) is asked for: the server's own live count at the price of reading one minute.
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, type StatsResponse } from '../api.ts';
import { formatCount, NOUNS } from './format.ts';

export const LIVE_REFRESH_MS = 30_000;

export function LiveVisitors({ base, initial, realtime }: { base: string; initial: number; realtime: boolean }) {
  const live = useQuery({
    queryKey: ['live-visitors', base],
    queryFn: ({ signal }) => {
      const now = Date.now();
      const query = { from: new Date(now - 60_000).toISOString(), to: new Date(now).toISOString() };
      return api<StatsResponse>(`${base}/stats`, { query, signal }).then((r) => r.kpis.live_visitors);
    },
    initialData: initial,
    initialDataUpdatedAt: Date.now(),
    staleTime: LIVE_REFRESH_MS,
    refetchInterval: LIVE_REFRESH_MS,
  });
  const text = formatCount(live.data, NOUNS.currentVisitor);
  const body = (
    <>
      <span className={live.data > 0 ? 'pulse' : 'pulse idle'} aria-hidden />
      <span data-testid="current-visitors">{text}</span>
    </>
  );
  return realtime ? (
    <Link className="live-visitors" to={{ search: '?period=realtime' }} title="Open the realtime view">
      {body}
    </Link>
  ) : (
    <p className="live-visitors">{body}</p>
  );
}
