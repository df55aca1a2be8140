// Goal conversions of the range on the dashboard (signed in or through a share link). Shown only
// when the site has goals; the goals API counts whole ranges, so dashboard filters do not apply.
import { useQuery } from '@tanstack/react-query';
import { api, type GoalStatsRow } from '../api.ts';
import { ListTable } from '../components/ListTable.tsx';
import { formatNumber, formatPercent } from './format.ts';
import type { DateRange } from './range.ts';

export function GoalConversions({ base, range, ready }: { base: string; range: DateRange; ready: boolean }) {
  const stats = useQuery({
    queryKey: ['goal-conversions', base, range],
    queryFn: ({ signal }) => api<{ rows: GoalStatsRow[] }>(`${base}/goals/stats`, { query: { ...range }, signal }),
    enabled: ready,
  });
  if (!stats.data || stats.data.rows.length === 0) return null;
  return (
    <section className="card" aria-labelledby="goal-conversions">
      <h2 id="goal-conversions">Goal conversions</h2>
      <ListTable columns={['Goal', 'Visitors converted', 'Rate']} className="table numbers" testId="goal-conversions">
        {stats.data.rows.map((r) => (
          <tr key={r.goal_id}>
            <th scope="row">{r.name}</th>
            <td>{formatNumber(r.conversions)}</td>
            <td>{formatPercent(r.conversion_rate)}</td>
          </tr>
        ))}
      </ListTable>
    </section>
  );
}
