import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on: bound, then released. Connections to it are refused until a
 * test starts something there (its own redis-server, a late proxy).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
