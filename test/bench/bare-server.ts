// The physical references for the ingest benchmark: a bare node:http server that reads the same
// body, parses its JSON and answers 202. Nothing Plumb does can be faster than this.
//
// `bare-server.ts <port> [--durable <file>]`: with --durable it also does the least that "durable
// before the 202" takes, as Plumb's journal does it: every body is appended to the file with group
// commit (the bodies of the requests that arrive meanwhile share one write and one fdatasync) and
// the 202 waits for that fdatasync. No framing, no enrichment, no rows: only what the disk costs.
import { open } from 'node:fs/promises';
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 0);
const durableAt = process.argv.indexOf('--durable');
const durableFile = durableAt > 0 ? process.argv[durableAt + 1] : undefined;

type Durable = (body: Buffer) => Promise<void>;

/** Rounds of the group commit so far: printed on SIGUSR2, for the bench to count rounds over a run. */
let rounds = 0;
process.on('SIGUSR2', () => console.log(`rounds ${rounds}`));

/** Group commit: one round at a time takes everything queued, writes it and fsyncs it. */
async function groupCommit(file: string): Promise<Durable> {
  const handle = await open(file, 'a');
  let queue: { body: Buffer; done(): void; failed(err: unknown): void }[] = [];
  let flushing = false;
  const flush = async () => {
    while (queue.length > 0) {
      const round = queue;
      queue = [];
      try {
        await handle.write(Buffer.concat(round.map((waiter) => waiter.body)));
        await handle.datasync();
        rounds++;
        for (const waiter of round) waiter.done();
      } catch (err) {
        for (const waiter of round) waiter.failed(err);
      }
    }
    flushing = false;
  };
  return (body) =>
    new Promise((done, failed) => {
      queue.push({ body, done, failed });
      // Started on a microtask so the requests parsed in the same turn share the first round.
      if (!flushing) {
        flushing = true;
        queueMicrotask(flush);
      }
    });
}

const durable = durableFile ? await groupCommit(durableFile) : undefined;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    try {
      JSON.parse(body.toString('utf8'));
    } catch {
      res.writeHead(400);
      res.end();
      return;
    }
    if (!durable) {
      res.writeHead(202);
      res.end();
      return;
    }
    durable(body).then(
      () => {
        res.writeHead(202);
        res.end();
      },
      () => {
        res.writeHead(503);
        res.end();
      },
    );
  });
});
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  console.log(typeof address === 'object' && address ? address.port : port);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
