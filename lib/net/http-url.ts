// The one reading of "an absolute http(s) URL" for text from outside (page URLs, Origin headers,
// embedding origins): the URL parser's answer, or null for anything it refuses or another scheme.

export function parseHttpUrl(text: string): URL | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  return url.protocol === 'https:' || url.protocol === 'http:' ? url : null;
}
