// The physical reference for the ingest benchmark: a bare node:http server that reads the same
// body, parses its JSON and answers 202. Nothing Plumb does can be faster than this.
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 0);
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(202);
    } catch {
      res.writeHead(400);
    }
    res.end();
  });
});
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  console.log(typeof address === 'object' && address ? address.port : port);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
