// Creates a new PGlite database in the directory named on the command line, then exits. openPglite
// runs it as a child process for a data dir's first start (see there).
import { PGlite } from '@electric-sql/pglite';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: pglite-initdb.ts <directory>\n');
  process.exit(2);
}
const db = await PGlite.create(dir);
await db.close();
