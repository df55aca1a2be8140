// The dashboard's one list table: a header row of column names, then the rows the caller renders.
// `actions` adds a last column for each row's buttons, named for screen readers only. The table
// spans its card; on a narrow screen it scrolls sideways inside its own box, never the page.
import type { ReactNode } from 'react';

export function ListTable({
  columns,
  actions = false,
  className = 'table',
  testId,
  children,
}: {
  /** Column names in order; a falsy entry (`cond && 'Name'`) leaves the column out. */
  columns: (string | false | null | undefined)[];
  actions?: boolean;
  className?: string;
  testId?: string;
  children: ReactNode;
}) {
  return (
    <div className="table-scroll">
      <table className={className} data-testid={testId}>
        <thead>
          <tr>
            {columns.filter((c): c is string => !!c).map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
