// The dashboard's one list table: a header row of column names, then the rows the caller renders.
// `actions` adds a last column for each row's buttons, named for screen readers only. The table
// spans its card; on a narrow screen it scrolls sideways inside its own box, never the page, and
// that box then takes the keyboard focus (arrow keys scroll it), named by `label`.
import { type ReactNode, useEffect, useRef, useState } from 'react';

/** Whether the element's content is wider than the element, followed as either changes size. */
function useScrollsSideways<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setScrolls(el.scrollWidth > el.clientWidth + 1);
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    if (el.firstElementChild) observer.observe(el.firstElementChild);
    measure();
    return () => observer.disconnect();
  }, []);
  return { ref, scrolls };
}

export function ListTable({
  columns,
  actions = false,
  numeric = [],
  className = 'table',
  testId,
  label = 'Table',
  children,
}: {
  /** Column names in order; a falsy entry (`cond && 'Name'`) leaves the column out. */
  columns: (string | false | null | undefined)[];
  actions?: boolean;
  /** Columns of figures: right-aligned in tabular digits (their cells take `className="num"`). */
  numeric?: string[];
  className?: string;
  testId?: string;
  /** What the scrolling box is called when it takes the focus. */
  label?: string;
  children: ReactNode;
}) {
  const { ref, scrolls } = useScrollsSideways<HTMLDivElement>();
  return (
    <div className="table-scroll" ref={ref} {...(scrolls ? { tabIndex: 0, role: 'region', 'aria-label': label } : {})}>
      <table className={className} data-testid={testId}>
        <thead>
          <tr>
            {columns.filter((c): c is string => !!c).map((c) => (
              <th key={c} scope="col" className={numeric.includes(c) ? 'num' : undefined}>
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
