// A zip built in memory for tests of what reads uploads: entries by name (a name ending in `/` is a
// folder), compressed unless told otherwise.
import yazl from 'yazl';

export function zipOf(entries: Iterable<readonly [string, Buffer | string]>, compress = true): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, data] of entries) {
    if (name.endsWith('/')) zip.addEmptyDirectory(name);
    else zip.addBuffer(Buffer.from(data), name, { compress });
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => parts.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(parts)));
    zip.outputStream.on('error', reject);
  });
}
