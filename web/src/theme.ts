// Light, dark, or whatever the system prefers; the choice is kept in localStorage and applied as
// data-theme on <html>, which the stylesheet's variables follow.
export type Theme = 'light' | 'dark' | 'system';

const KEY = 'plumb-theme';

/**
 * localStorage, or null where the browser refuses it: a share page framed by another site is
 * third-party there, and browsers that block third-party storage throw on the mere access.
 */
function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

export function storedTheme(): Theme {
  const value = storage()?.getItem(KEY);
  return value === 'light' || value === 'dark' ? value : 'system';
}

const CHANGED = 'plumb-theme-change';

export function applyTheme(theme: Theme) {
  if (theme === 'system') {
    storage()?.removeItem(KEY);
    delete document.documentElement.dataset.theme;
  } else {
    storage()?.setItem(KEY, theme);
    document.documentElement.dataset.theme = theme;
  }
  window.dispatchEvent(new Event(CHANGED));
}

/**
 * Calls back whenever the colours in effect may have changed (a choice here, or the system's
 * preference); canvas drawings read colours once and must redraw then.
 */
export function onThemeChange(callback: () => void): () => void {
  const media = matchMedia('(prefers-color-scheme: dark)');
  media.addEventListener('change', callback);
  window.addEventListener(CHANGED, callback);
  return () => {
    media.removeEventListener('change', callback);
    window.removeEventListener(CHANGED, callback);
  };
}

export function applyStoredTheme() {
  applyTheme(storedTheme());
}

/** The theme in effect now (the system's when none was chosen). */
export function effectiveTheme(): 'light' | 'dark' {
  const chosen = storedTheme();
  if (chosen !== 'system') return chosen;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}
