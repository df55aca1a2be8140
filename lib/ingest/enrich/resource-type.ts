// What kind of resource an AI agent fetched (html page, document, image, other), for the AI-fetch
// breakdowns: from the response Content-Type when the crawler log has it, else from the path.

export const RESOURCE_TYPES = ['html', 'document', 'image', 'other'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

const DOCUMENT_TYPES = new Set([
  'application/pdf',
  'application/msword',
  'application/rtf',
  'application/epub+zip',
  'application/vnd.ms-excel',
  'application/vnd.ms-powerpoint',
  'text/plain',
  'text/markdown',
  'text/x-markdown',
  'text/csv',
  'text/rtf',
]);
/** OOXML (docx, xlsx, pptx) and OpenDocument types share these prefixes. */
const DOCUMENT_PREFIXES = ['application/vnd.openxmlformats-officedocument.', 'application/vnd.oasis.opendocument.'];
/** Content types that say nothing about the content: the path decides. */
const GENERIC_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/unknown']);

const HTML_EXTENSIONS = new Set(['html', 'htm', 'xhtml', 'shtml', 'php', 'asp', 'aspx', 'jsp', 'cfm']);
const DOCUMENT_EXTENSIONS = new Set(['pdf', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'odt', 'ods', 'odp', 'rtf', 'txt', 'md', 'markdown', 'csv', 'epub']);
const IMAGE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp', 'avif', 'svg', 'ico', 'bmp', 'tif', 'tiff', 'heic', 'heif', 'jxl']);

function fromContentType(contentType: string): ResourceType | null {
  const semicolon = contentType.indexOf(';');
  const media = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  if (GENERIC_TYPES.has(media)) return null;
  if (media === 'text/html' || media === 'application/xhtml+xml') return 'html';
  if (media.startsWith('image/')) return 'image';
  if (DOCUMENT_TYPES.has(media) || DOCUMENT_PREFIXES.some((prefix) => media.startsWith(prefix))) return 'document';
  return 'other';
}

/** The path of a path-or-URL, without query or fragment. */
function pathOf(pathOrUrl: string): string {
  let path = pathOrUrl;
  const scheme = path.indexOf('://');
  if (scheme !== -1) {
    const slash = path.indexOf('/', scheme + 3);
    path = slash === -1 ? '/' : path.slice(slash);
  }
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
}

function fromPath(pathOrUrl: string): ResourceType {
  const path = pathOf(pathOrUrl);
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  // No extension ("/", "/blog/post") is how sites serve their pages.
  if (dot === -1) return 'html';
  const extension = name.slice(dot + 1).toLowerCase();
  if (HTML_EXTENSIONS.has(extension)) return 'html';
  if (DOCUMENT_EXTENSIONS.has(extension)) return 'document';
  if (IMAGE_EXTENSIONS.has(extension)) return 'image';
  return 'other';
}

/**
 * html (text/html, xhtml; or a path without extension, .html, .php, …), document (pdf, office,
 * OpenDocument, epub, plain text, markdown, csv), image (image/*), else other (scripts, styles,
 * feeds, JSON, media). A specific Content-Type wins over the extension; a generic one
 * (application/octet-stream) or none leaves it to the path.
 */
export function resourceType(pathOrUrl: string, contentType?: string): ResourceType {
  if (contentType) {
    const type = fromContentType(contentType);
    if (type !== null) return type;
  }
  return fromPath(pathOrUrl);
}
