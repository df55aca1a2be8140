// The icon before a source's name, through Plumb's favicon proxy like the site icons: a named
// source's (Google, Hacker News) from its home host, a referring hostname's own; a plain mark for
// "(none)", and when no icon loads.
import { Globe, MoveRight } from 'lucide-react';
import { useState } from 'react';

const HOSTNAME = /^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

export function SourceIcon({ source }: { source: string }) {
  const [failed, setFailed] = useState(false);
  if (source === '') return <MoveRight className="source-icon" aria-hidden size={16} />;
  if (failed) return <Globe className="source-icon" aria-hidden size={16} />;
  const src = HOSTNAME.test(source) ? `/api/favicon/${encodeURIComponent(source)}` : `/api/favicon/source/${encodeURIComponent(source)}`;
  return <img className="source-icon" src={src} alt="" width={16} height={16} loading="lazy" onError={() => setFailed(true)} />;
}
