// The icon before a source's name: the favicon of a source that is a hostname (a referring site
// the catalog does not name), through Plumb's favicon proxy like the site icons; a plain mark for
// named sources and for "(none)".
import { Globe, MoveRight } from 'lucide-react';
import { useState } from 'react';

const HOSTNAME = /^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

export function SourceIcon({ source }: { source: string }) {
  const [failed, setFailed] = useState(false);
  if (source === '') return <MoveRight className="source-icon" aria-hidden size={16} />;
  if (failed || !HOSTNAME.test(source)) return <Globe className="source-icon" aria-hidden size={16} />;
  return <img className="source-icon" src={`/api/favicon/${encodeURIComponent(source)}`} alt="" width={16} height={16} loading="lazy" onError={() => setFailed(true)} />;
}
