// A layout check for dashboard screens, run inside the page: horizontal overflow, text-bearing
// elements that overlap, text cut off by its own box, table cells out of line with their row,
// one-line labels broken onto two lines, and separators left at the start of a line. Each problem names the elements by a short CSS path with
// their rectangles, so a failure says what to fix without opening a screenshot.
import type { Page } from 'playwright-core';

export interface LayoutElement {
  /** A short CSS path: up to four steps, stopping at an id. */
  path: string;
  /** The element's visible text (or value, or accessible name), shortened. */
  text: string;
  /** [x, y, width, height] in CSS pixels, relative to the document's top left corner. */
  rect: [number, number, number, number];
}

export interface LayoutProblem {
  kind: 'page-overflow' | 'beyond-edge' | 'overlap' | 'clipped-text' | 'misaligned-cell' | 'wrapped-label' | 'dangling-separator';
  detail: string;
  elements: LayoutElement[];
}

/**
 * What is exempt from the overlap rule, on purpose and few: layers drawn above the page
 * (dialogs, tooltips, toasts) and the skip link, which sits over the header only while focused.
 * Fixed and sticky elements are exempt too (they move over the content when it scrolls).
 */
export const OVERLAY_SELECTORS = ['dialog', '[role="dialog"]', '[role="alertdialog"]', '[role="tooltip"]', '.toast', '.skip-link'] as const;

/** Elements a reader or a pointer aims at; two of them sharing pixels is always a fault. */
export const TEXT_BEARING = [
  'a[href]',
  'button',
  'label',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'p',
  'legend',
  'summary',
  'input:not([type="hidden"])',
  'select',
  'textarea',
  'th',
  'td',
  '[role="tab"]',
  '.kpi-value',
  '.chip',
] as const;

/**
 * Short names that read as one unit: a control's or tab's name, a column or field label, a chip,
 * a figure with its unit, a table cell's value (a date, an email, an action). Broken onto a second
 * line they read as two things (and rows of them stop lining up). Only names of a few words are
 * held to one line: a sentence may wrap.
 */
export const ONE_LINE_LABELS = ['button', '[role="tab"]', 'nav a', '.chip', 'th', 'td', 'legend', 'label.field > span:first-child', '.kpi-label', '.site-figures > span'] as const;
const ONE_LINE_MAX_WORDS = 5;

interface CheckOptions {
  overlays: string;
  textBearing: string;
  oneLine: string;
  oneLineMaxWords: number;
  /** Overlaps and overflows up to this many pixels are rounding (collapsed table borders). */
  tolerance: number;
  /** At most this many problems of each kind, so a broken screen still gives a readable message. */
  limit: number;
}

/** Runs in the browser: it may use nothing from this module's scope, only its argument. */
function findProblems(options: CheckOptions): LayoutProblem[] {
  type Box = { left: number; top: number; right: number; bottom: number };
  const { tolerance, limit } = options;
  const viewport = document.documentElement.clientWidth;
  const scrollX = window.scrollX;
  const scrollY = window.scrollY;
  const styles = new Map<Element, CSSStyleDeclaration>();
  const style = (el: Element) => {
    let s = styles.get(el);
    if (!s) {
      s = getComputedStyle(el);
      styles.set(el, s);
    }
    return s;
  };

  const pathOf = (el: Element) => {
    const steps: string[] = [];
    for (let node: Element | null = el; node && node !== document.body && steps.length < 4; node = node.parentElement) {
      let step = node.tagName.toLowerCase();
      if (node.id) {
        steps.unshift(`${step}#${node.id}`);
        break;
      }
      const testId = node.getAttribute('data-testid');
      if (testId) step += `[data-testid="${testId}"]`;
      const classes = [...node.classList].slice(0, 2);
      if (classes.length > 0) step += `.${classes.join('.')}`;
      steps.unshift(step);
    }
    return steps.join(' > ');
  };
  const textOf = (el: Element) => {
    const raw =
      el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement
        ? el.value || el.placeholder
        : el.textContent || el.getAttribute('aria-label') || el.getAttribute('title') || '';
    const text = raw.replace(/\s+/g, ' ').trim();
    return text.length > 40 ? `${text.slice(0, 39)}…` : text;
  };
  const described = (el: Element, box: Box) => ({
    path: pathOf(el),
    text: textOf(el),
    rect: [box.left + scrollX, box.top + scrollY, box.right - box.left, box.bottom - box.top].map(Math.round) as [number, number, number, number],
  });

  const visible = (el: Element) => {
    const rect = el.getBoundingClientRect();
    // 1 px boxes are the visually-hidden texts for screen readers.
    if (rect.width <= 1 || rect.height <= 1) return false;
    return el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
  };

  // The part of a box that shows: every ancestor that does not let its content overflow (hidden,
  // clip, or a scroller such as a table wrapper) cuts it to that ancestor's padding box.
  const clipOf = (el: Element): Box => {
    const clip: Box = { left: -Infinity, top: -Infinity, right: Infinity, bottom: Infinity };
    if (style(el).position === 'fixed') return clip;
    for (let node = el.parentElement; node && node !== document.body && node !== document.documentElement; node = node.parentElement) {
      const s = style(node);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      const r = node.getBoundingClientRect();
      const left = r.left + node.clientLeft;
      const top = r.top + node.clientTop;
      if (s.overflowX !== 'visible') {
        clip.left = Math.max(clip.left, left);
        clip.right = Math.min(clip.right, left + node.clientWidth);
      }
      if (s.overflowY !== 'visible') {
        clip.top = Math.max(clip.top, top);
        clip.bottom = Math.min(clip.bottom, top + node.clientHeight);
      }
      if (s.position === 'fixed') break;
    }
    return clip;
  };
  const cut = (box: DOMRect | Box, clip: Box): Box | null => {
    const out = { left: Math.max(box.left, clip.left), top: Math.max(box.top, clip.top), right: Math.min(box.right, clip.right), bottom: Math.min(box.bottom, clip.bottom) };
    return out.right - out.left > tolerance && out.bottom - out.top > tolerance ? out : null;
  };

  const problems: LayoutProblem[] = [];
  const counts = new Map<string, number>();
  const report = (problem: LayoutProblem) => {
    const n = counts.get(problem.kind) ?? 0;
    counts.set(problem.kind, n + 1);
    if (n < limit) problems.push(problem);
  };

  const page = document.scrollingElement ?? document.documentElement;
  if (page.scrollWidth > window.innerWidth) {
    report({ kind: 'page-overflow', detail: `the page is ${page.scrollWidth}px wide in a ${window.innerWidth}px window`, elements: [] });
  }

  const all = [...document.body.querySelectorAll('*')].filter((el) => !(el.parentElement instanceof SVGElement) && !['SCRIPT', 'STYLE', 'TEMPLATE'].includes(el.tagName));
  const shown = all.filter(visible);

  // Beyond the edge: only the outermost offender, its descendants go with it.
  const flagged: Element[] = [];
  for (const el of shown) {
    if (flagged.some((f) => f.contains(el))) continue;
    const box = cut(el.getBoundingClientRect(), clipOf(el));
    if (!box) continue;
    if (box.right > viewport + tolerance || box.left < -tolerance) {
      flagged.push(el);
      const side = box.left < -tolerance ? `starts ${Math.round(-box.left)}px left of the window` : `ends ${Math.round(box.right - viewport)}px beyond the ${viewport}px window`;
      report({ kind: 'beyond-edge', detail: side, elements: [described(el, box)] });
    }
  }

  // Overlaps between text-bearing elements that are not nested in one another.
  const layerOf = (el: Element): Element | null => {
    for (let node: Element | null = el; node && node !== document.body; node = node.parentElement) {
      const position = style(node).position;
      if (position === 'fixed' || position === 'sticky') return node;
    }
    return null;
  };
  // A field's text lives in its content box: an icon button over its padding (a combobox's
  // toggle, a clear button) covers no text.
  const isControl = (el: Element) => el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement;
  const contentBox = (el: Element, r: DOMRect): Box => {
    const s = style(el);
    const px = (v: string) => Number.parseFloat(v) || 0;
    return {
      left: r.left + px(s.borderLeftWidth) + px(s.paddingLeft),
      top: r.top + px(s.borderTopWidth) + px(s.paddingTop),
      right: r.right - px(s.borderRightWidth) - px(s.paddingRight),
      bottom: r.bottom - px(s.borderBottomWidth) - px(s.paddingBottom),
    };
  };
  const bearers = [...document.body.querySelectorAll(options.textBearing)]
    .filter((el) => visible(el) && !el.closest(options.overlays))
    .map((el) => {
      const clip = clipOf(el);
      const boxes = [...el.getClientRects()].map((r) => cut(isControl(el) ? contentBox(el, r) : r, clip)).filter((b): b is Box => b !== null);
      return { el, boxes, layer: layerOf(el) };
    })
    .filter((b) => b.boxes.length > 0);
  for (let i = 0; i < bearers.length; i++) {
    for (let j = i + 1; j < bearers.length; j++) {
      const a = bearers[i];
      const b = bearers[j];
      if (a.layer !== b.layer || a.el.contains(b.el) || b.el.contains(a.el)) continue;
      const hit = a.boxes.flatMap((x) => b.boxes.map((y) => [x, y] as const)).find(([x, y]) => Math.min(x.right, y.right) - Math.max(x.left, y.left) > tolerance && Math.min(x.bottom, y.bottom) - Math.max(x.top, y.top) > tolerance);
      if (hit) report({ kind: 'overlap', detail: 'these two share pixels', elements: [described(a.el, hit[0]), described(b.el, hit[1])] });
    }
  }

  // Text cut off by its own box: overflow hidden without an ellipsis to say so.
  for (const el of shown) {
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) continue;
    const s = style(el);
    const text = el.textContent?.trim();
    if (!text || s.textOverflow === 'ellipsis') continue;
    const hidesX = s.overflowX === 'hidden' || s.overflowX === 'clip';
    const hidesY = (s.overflowY === 'hidden' || s.overflowY === 'clip') && s.webkitLineClamp === 'none';
    const wide = hidesX && el.scrollWidth > el.clientWidth + tolerance;
    const tall = hidesY && el.scrollHeight > el.clientHeight + tolerance;
    if (wide || tall) {
      const detail = wide ? `its text needs ${el.scrollWidth}px and gets ${el.clientWidth}px` : `its text needs ${el.scrollHeight}px of height and gets ${el.clientHeight}px`;
      report({ kind: 'clipped-text', detail, elements: [described(el, el.getBoundingClientRect())] });
    }
  }

  // A cell that is not a table cell (display: flex on a td) is a box of its own: it leaves the
  // collapsed borders of the table and takes its own height, so its border is a step off its
  // neighbours'.
  for (const row of document.body.querySelectorAll('tr')) {
    if (!visible(row)) continue;
    const r = row.getBoundingClientRect();
    for (const cell of row.cells) {
      if (!visible(cell)) continue;
      const b = cell.getBoundingClientRect();
      const display = style(cell).display;
      // Half a pixel: a collapsed border one pixel off is already a visible step.
      const short = cell.rowSpan === 1 && (Math.abs(b.top - r.top) > 0.5 || Math.abs(b.bottom - r.bottom) > 0.5);
      if (display === 'table-cell' && !short) continue;
      const detail = display === 'table-cell' ? `the cell is ${Math.round(b.height)}px tall in a ${Math.round(r.height)}px row` : `the cell is display: ${display}, not a table cell`;
      report({ kind: 'misaligned-cell', detail: `${detail}, so its border is out of line`, elements: [described(cell, b)] });
      break;
    }
  }

  // A one-line label on two lines: its shown text fragments sit at more than one height (text for
  // screen readers only, in a 1 px box, does not count).
  const linesOf = (el: Element) => {
    const tops: number[] = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent?.trim()) continue;
      let hidden = false;
      for (let up = node.parentElement; up && up !== el.parentElement; up = up.parentElement) {
        const b = up.getBoundingClientRect();
        if (b.width <= 1 || b.height <= 1) hidden = true;
      }
      if (hidden) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const r of range.getClientRects()) {
        if (r.width > 1 && !tops.some((top) => Math.abs(top - r.top) < r.height / 2)) tops.push(r.top);
      }
    }
    return tops.length;
  };
  for (const el of document.body.querySelectorAll(options.oneLine)) {
    if (!visible(el) || el.closest(options.overlays)) continue;
    if ((el.textContent ?? '').trim().split(/\s+/).length > options.oneLineMaxWords) continue;
    const lines = linesOf(el);
    if (lines > 1) report({ kind: 'wrapped-label', detail: `its text takes ${lines} lines`, elements: [described(el, el.getBoundingClientRect())] });
  }

  // A separator drawn before an item (`a · b`) that wrapped to a new line now starts that line.
  for (const el of shown) {
    const before = getComputedStyle(el, '::before').content;
    const previous = el.previousElementSibling;
    if (!previous || !/^"\s*[·•|/–—]\s*"$/.test(before)) continue;
    const last = [...previous.getClientRects()].pop();
    const first = el.getClientRects()[0];
    if (last && first && first.top >= last.bottom - tolerance) {
      report({ kind: 'dangling-separator', detail: `the ${before} before it starts a line`, elements: [described(el, first)] });
    }
  }

  for (const [kind, n] of counts) {
    if (n > limit) problems.push({ kind: kind as LayoutProblem['kind'], detail: `and ${n - limit} more of this kind`, elements: [] });
  }
  return problems;
}

/** The layout problems of the page as it is now (scrolled to the top). */
export async function layoutProblems(page: Page, options: Partial<Pick<CheckOptions, 'tolerance' | 'limit'>> = {}): Promise<LayoutProblem[]> {
  await page.evaluate(() => window.scrollTo(0, 0));
  return page.evaluate(findProblems, { overlays: OVERLAY_SELECTORS.join(', '), textBearing: TEXT_BEARING.join(', '), oneLine: ONE_LINE_LABELS.join(', '), oneLineMaxWords: ONE_LINE_MAX_WORDS, tolerance: 1.5, limit: 8, ...options });
}

const shown = (e: LayoutElement) => `${e.path}${e.text ? ` "${e.text}"` : ''} [${e.rect[0]},${e.rect[1]} ${e.rect[2]}×${e.rect[3]}]`;

/** One line per problem, prefixed with where it was seen: `dashboard · dark · 360px: overlap: …`. */
export function describeProblems(where: string, problems: readonly LayoutProblem[]): string[] {
  return problems.map((p) => `${where}: ${p.kind}: ${[p.elements.map(shown).join(' ⟷ '), p.detail].filter(Boolean).join(' — ')}`);
}
