// The browser-facing hardening headers of every answer: the dashboard runs under a strict Content
// Security Policy (it loads nothing from elsewhere and runs no inline script), nothing of Plumb may
// be framed by another site unless a share link's owner listed that site, and JSON never sniffs.
import type { ServerResponse } from 'node:http';

/**
 * The dashboard: scripts, styles, fonts and icons only from its own origin. `data:` images are
 * allowed because the SVG placeholder and the authenticator QR code may arrive as data URLs;
 * React sets inline widths through the CSSOM, which style-src does not govern.
 */
const DASHBOARD_SOURCES = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-src 'none'",
].join('; ');

/** Features the dashboard never uses; WebAuthn (passkeys) and the clipboard stay available. */
export const PERMISSIONS_POLICY = [
  'accelerometer=()',
  'camera=()',
  'display-capture=()',
  'geolocation=()',
  'gyroscope=()',
  'magnetometer=()',
  'microphone=()',
  'midi=()',
  'payment=()',
  'usb=()',
].join(', ');

/** Share tokens travel in page URLs: no other site learns them (or anything else) from a Referer. */
export const REFERRER_POLICY = 'same-origin';

/** JSON, scripts and icons are never documents to render: nothing may load in them, nothing frame them. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** Name, value, name, value …: the answer headers of every API answer with content. */
export const API_SECURITY_HEADERS: readonly string[] = [
  'X-Content-Type-Options',
  'nosniff',
  'Content-Security-Policy',
  API_CSP,
  'X-Frame-Options',
  'DENY',
  'Referrer-Policy',
  REFERRER_POLICY,
];

/** The dashboard's policy; `embedders` are the origins a share page may be framed by (none: no framing). */
export function dashboardCsp(embedders: readonly string[] = []): string {
  const ancestors = embedders.length > 0 ? embedders.join(' ') : "'none'";
  return `${DASHBOARD_SOURCES}; frame-ancestors ${ancestors}`;
}

export function setApiSecurityHeaders(res: ServerResponse) {
  for (let i = 0; i < API_SECURITY_HEADERS.length; i += 2) res.setHeader(API_SECURITY_HEADERS[i], API_SECURITY_HEADERS[i + 1]);
}

/** A dashboard page or asset. X-Frame-Options (older browsers) is left out when some site may frame the page. */
export function setDashboardSecurityHeaders(res: ServerResponse, embedders: readonly string[] = []) {
  res.setHeader('Content-Security-Policy', dashboardCsp(embedders));
  if (embedders.length > 0) res.removeHeader('X-Frame-Options');
  else res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', REFERRER_POLICY);
  res.setHeader('Permissions-Policy', PERMISSIONS_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
}

/** The tracking script is embedded by customers' pages on other origins: it must stay loadable there. */
export function setTrackerSecurityHeaders(res: ServerResponse) {
  res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
  res.setHeader('X-Content-Type-Options', 'nosniff');
}
