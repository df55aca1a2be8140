// The icon shown when a site's favicon cannot be had (upstream down, slow, not an image …): a
// neutral globe, bundled in code so it costs no request and no file, and is served like any icon.
export const PLACEHOLDER_TYPE = 'image/svg+xml';

export const PLACEHOLDER_ICON = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">' +
    '<g fill="none" stroke="#94a3b8" stroke-width="1.2">' +
    '<circle cx="8" cy="8" r="6.4"/>' +
    '<path d="M1.6 8h12.8M8 1.6c1.8 1.8 2.6 4 2.6 6.4S9.8 12.6 8 14.4C6.2 12.6 5.4 10.4 5.4 8S6.2 3.4 8 1.6z"/>' +
    '</g></svg>',
);
