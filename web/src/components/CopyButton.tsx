// The one copy button: copies a text (a snippet, a token, a link, recovery codes), then says
// "Copied" for a moment, in the button and to screen readers. Where the clipboard API is missing
// (an instance reached over plain http on another host is not a secure context) it copies
// through a selected text area, the way browsers always could.
import { Check, Copy } from 'lucide-react';
import { useEffect, useState } from 'react';

/** How long the button says "Copied" (or that copying failed). */
export const COPIED_MS = 2000;

async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Refused (no permission, page not focused): the older way below may still work.
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  const focused = document.activeElement as HTMLElement | null;
  document.body.append(area);
  area.select();
  let copied = false;
  try {
    copied = document.execCommand('copy');
  } catch {
    copied = false;
  }
  area.remove();
  focused?.focus();
  return copied;
}

export function CopyButton({ text, label, className = 'button' }: { text: string; label: string; className?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), COPIED_MS);
    return () => clearTimeout(timer);
  }, [state]);
  const said = state === 'copied' ? 'Copied' : state === 'failed' ? 'Could not copy: select the text and copy it' : '';
  return (
    <>
      <button type="button" className={`${className} copy-button`} data-state={state} onClick={() => void copyText(text).then((ok) => setState(ok ? 'copied' : 'failed'))}>
        {state === 'copied' ? <Check aria-hidden size={16} /> : <Copy aria-hidden size={16} />}
        {/* The button keeps its name while it says "Copied"; the status line below announces it. */}
        <span aria-hidden={state === 'copied' ? true : undefined}>{state === 'copied' ? 'Copied' : label}</span>
        {state === 'copied' && <span className="visually-hidden">{label}</span>}
      </button>
      <span className={state === 'failed' ? 'error small' : 'visually-hidden'} role="status">
        {said}
      </span>
    </>
  );
}

/** Saves a text as a file the browser downloads (no server round trip: the text is already here). */
export function downloadText(filename: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the URL; revoking later frees it without racing the browser.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
