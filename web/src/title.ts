// The document title names the page, so tabs, history and screen readers can tell pages apart.
import { useEffect } from 'react';

export function useTitle(...parts: (string | undefined)[]) {
  const title = [...parts.filter(Boolean), 'Plumb'].join(' · ');
  useEffect(() => {
    document.title = title;
  }, [title]);
}
