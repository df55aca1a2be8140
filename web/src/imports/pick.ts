// Checks of the files a person picks for an import, before anything is sent: what the importer
// takes (name endings, how many, how large), and, to resume an upload after the page was left,
// that the files picked again are the import's own.
import { formatBytes } from '../dashboard/format.ts';

/** The little of a File these checks read (a browser File has both). */
export interface Picked {
  name: string;
  size: number;
}

export interface Accepts {
  extensions: readonly string[];
  max_files: number;
  max_file_bytes: number;
}

/** A file's name ends with one of the endings, compared without case (".csv" takes "Export.CSV"). */
const endsWithOne = (name: string, extensions: readonly string[]) => extensions.some((ext) => name.toLowerCase().endsWith(ext.toLowerCase()));

/** What is wrong with the picked files for this importer, one sentence each; none: they may be sent. */
export function pickProblems(files: readonly Picked[], accepts: Accepts): string[] {
  if (files.length === 0) return ['Choose at least one file.'];
  const problems: string[] = [];
  if (files.length > accepts.max_files) problems.push(`Choose at most ${accepts.max_files} ${accepts.max_files === 1 ? 'file' : 'files'}; ${files.length} are chosen.`);
  for (const file of files) {
    if (!endsWithOne(file.name, accepts.extensions)) problems.push(`${file.name} is not one of the accepted files (${accepts.extensions.join(', ')}).`);
    else if (file.size > accepts.max_file_bytes) problems.push(`${file.name} is ${formatBytes(file.size)}, more than the ${formatBytes(accepts.max_file_bytes)} a file may have.`);
  }
  return problems;
}

/**
 * The picked files in the order of the import's files (matched by name and size), or the names of
 * the import's files that are missing from them. The server still checks every byte's checksum.
 */
export function matchPicked<T extends Picked>(wanted: readonly Picked[], picked: readonly T[]): { files: T[] } | { missing: string[] } {
  const files: T[] = [];
  const missing: string[] = [];
  for (const want of wanted) {
    const found = picked.find((p) => p.name === want.name && p.size === want.size);
    if (found) files.push(found);
    else missing.push(want.name);
  }
  return missing.length > 0 ? { missing } : { files };
}
