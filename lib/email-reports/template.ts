// The scheduled report as a message: the period's visitors, pageviews, visits and bounce rate,
// the top pages and sources and the goal conversions, each beside the period before. Plain text
// and HTML (tables with inline styles; no remote images, no tracking pixels, every value
// escaped). The message carries the one-click unsubscribe headers of RFC 8058, whose link is
// also in both bodies.
import { BRAND } from '../brand.ts';
import { escapeHtml, oneLine } from '../mail/html.ts';
import type { MailContext, RenderedMail } from '../mail/templates.ts';
import type { Frequency } from './period.ts';
import type { Change, RankedRow, ReportFigures } from './report.ts';

export interface EmailReportParams {
  site_id: string;
  site_domain: string;
  frequency: Frequency;
  /** Local dates of the period, both inclusive, and the zone they are in. */
  from: string;
  to: string;
  timezone: string;
  figures: ReportFigures;
  /** Signed, single-purpose: ends this subscription (lib/email-reports/subscriptions.ts). */
  unsubscribe_token: string;
}

const number = new Intl.NumberFormat('en-US');

/** "+25%", "−10%", "no change", "new" (nothing the period before). */
export function changeText({ current, previous }: Change, unit: '%' | 'pts' = '%'): string {
  if (unit === 'pts') {
    const diff = Math.round((current - previous) * 10) / 10;
    return diff === 0 ? 'no change' : `${diff > 0 ? '+' : '−'}${Math.abs(diff)} pts`;
  }
  if (current === previous) return 'no change';
  if (previous === 0) return 'new';
  const pct = Math.round(((current - previous) / previous) * 100);
  return pct === 0 ? (current > previous ? '+<1%' : '−<1%') : `${pct > 0 ? '+' : '−'}${Math.abs(pct)}%`;
}

interface Line {
  label: string;
  value: string;
  change: string;
}

const headline = (f: ReportFigures): Line[] => [
  { label: 'Visitors', value: number.format(f.visitors.current), change: changeText(f.visitors) },
  { label: 'Pageviews', value: number.format(f.pageviews.current), change: changeText(f.pageviews) },
  { label: 'Visits', value: number.format(f.visits.current), change: changeText(f.visits) },
  { label: 'Bounce rate', value: `${f.bounce_rate.current}%`, change: changeText(f.bounce_rate, 'pts') },
];
const ranked = (rows: readonly RankedRow[]): Line[] => rows.map((row) => ({ label: row.value === '' ? '(none)' : row.value, value: number.format(row.current), change: changeText(row) }));

const td = 'padding:4px 12px 4px 0;border-bottom:1px solid #e5e5e5';
function table(title: string, valueLabel: string, lines: readonly Line[]): string {
  const rows = lines.map((l) => `<tr><td style="${td}">${escapeHtml(l.label)}</td><td style="${td};text-align:right">${escapeHtml(l.value)}</td><td style="${td};text-align:right;color:#555555">${escapeHtml(l.change)}</td></tr>`);
  return [
    `<h2 style="font-size:16px;margin:24px 0 8px">${escapeHtml(title)}</h2>`,
    '<table style="border-collapse:collapse;font-size:14px" role="presentation">',
    `<tr><th style="${td};text-align:left"></th><th style="${td};text-align:right">${escapeHtml(valueLabel)}</th><th style="${td};text-align:right">Change</th></tr>`,
    ...(rows.length > 0 ? rows : [`<tr><td style="${td}" colspan="3">Nothing in this period</td></tr>`]),
    '</table>',
  ].join('\n');
}

function textSection(title: string, lines: readonly Line[]): string {
  const body = lines.length > 0 ? lines.map((l) => `  ${l.label}: ${l.value} (${l.change})`) : ['  Nothing in this period'];
  return [`${title}:`, ...body].join('\n');
}

export function renderEmailReport(p: EmailReportParams, c: MailContext): RenderedMail {
  const token = encodeURIComponent(p.unsubscribe_token);
  // The header's link is the API's (mail apps POST to it); the body's opens a page with a button.
  const oneClick = `${c.publicUrl}/api/email-reports/unsubscribe?token=${token}`;
  const unsubscribe = `${c.publicUrl}/email-reports/unsubscribe?token=${token}`;
  const dashboard = `${c.publicUrl}/sites/${encodeURIComponent(p.site_id)}`;
  const kind = p.frequency === 'weekly' ? 'Weekly' : 'Monthly';
  const subject = oneLine(`${kind} report for ${p.site_domain}: ${p.from} to ${p.to}`);
  const intro = `${kind} summary of ${p.site_domain} from ${p.from} to ${p.to} (${p.timezone}), compared with the ${p.frequency === 'weekly' ? 'week' : 'month'} before.`;
  const sections: [string, string, Line[]][] = [
    ['Overview', 'Value', headline(p.figures)],
    ['Top pages', 'Visitors', ranked(p.figures.pages)],
    ['Top sources', 'Visitors', ranked(p.figures.sources)],
  ];
  if (p.figures.goals.length > 0) sections.push(['Goal conversions', 'Visitors', ranked(p.figures.goals)]);
  const why = `You get this because you subscribed to ${p.frequency} reports of ${p.site_domain} on ${BRAND}.`;
  const text = [
    intro,
    ...sections.map(([title, , lines]) => textSection(title, lines)),
    `Open the dashboard:\n${dashboard}`,
    `${why} Unsubscribe:\n${unsubscribe}`,
    `— ${BRAND}`,
  ].join('\n\n');
  const html = [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    '<body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#1a1a1a;margin:0;padding:24px">',
    `<p style="margin:0 0 16px">${escapeHtml(intro)}</p>`,
    ...sections.map(([title, valueLabel, lines]) => table(title, valueLabel, lines)),
    `<p style="margin:24px 0 16px"><a href="${escapeHtml(dashboard)}" style="color:#1f4fd6">Open the dashboard</a></p>`,
    `<p style="margin:0 0 16px;font-size:13px;color:#555555">${escapeHtml(why)} <a href="${escapeHtml(unsubscribe)}" style="color:#555555">Unsubscribe</a></p>`,
    `<p style="margin:24px 0 0;color:#555555">${escapeHtml(`— ${BRAND}`)}</p>`,
    '</body></html>',
  ].join('\n');
  return {
    subject,
    text,
    html,
    headers: { 'List-Unsubscribe': `<${oneClick}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}
