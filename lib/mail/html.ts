// Escaping shared by every mail template: values in HTML bodies, and header values (subjects)
// that carry user text. The same escapes serve XML (spreadsheet cells, lib/exports/xlsx.ts).
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** Subjects carry user text (team names): no line breaks, so no header can be smuggled in. */
export const oneLine = (value: string) => value.replace(/[\r\n\t]+/g, ' ').trim();
