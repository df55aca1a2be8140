// A TCP proxy in front of a real server that a test can freeze: while frozen, nothing crosses in
// either direction (bytes wait, as on a stalled link or a paused process), and thawing delivers
// them in order. Lets a test freeze one client of a shared server without any hook in the client.
import { createServer, type Socket, connect } from 'node:net';

export interface FreezableProxy {
  /** URL of the proxy with the target URL's scheme and path, e.g. redis://127.0.0.1:41234. */
  readonly url: string;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startFreezableProxy(targetUrl: string): Promise<FreezableProxy> {
  const target = new URL(targetUrl);
  let frozen = false;
  const links: { forward(): void; sockets: Socket[] }[] = [];

  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    const held: { to: Socket; chunk: Buffer }[] = [];
    const relay = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (frozen) held.push({ to, chunk });
        else to.write(chunk);
      });
    relay(client, upstream);
    relay(upstream, client);
    for (const [one, other] of [
      [client, upstream],
      [upstream, client],
    ]) {
      one.on('error', () => other.destroy());
      one.on('close', () => other.destroy());
    }
    const forward = () => {
      for (const { to, chunk } of held.splice(0)) to.write(chunk);
    };
    links.push({ sockets: [client, upstream], forward });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : 0;

  return {
    url: `${target.protocol}//${target.username ? `${target.username}:${target.password}@` : ''}127.0.0.1:${port}${target.pathname}`,
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      for (const link of links) link.forward();
    },
    async close() {
      for (const link of links) for (const socket of link.sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
