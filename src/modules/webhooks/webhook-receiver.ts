import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST as a receiver got it: the raw body and headers, for signature checks. */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  /** `performance.timeOrigin + performance.now()` when the body was complete. */
  receivedAt: number;
}

/** How the receiver answers one request: a status, after an optional delay, with an optional body. */
export type ReceiverBehaviour = (delivery: ReceivedDelivery, index: number) => { status: number; delayMs?: number; body?: string };

/**
 * A webhook endpoint on loopback for the integration tests and the benchmark: it records every
 * request and answers as `behaviour` says (fail, time out, recover).
 */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  behaviour: ReceiverBehaviour = () => ({ status: 200 });
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(path = '/hooks'): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const delivery = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: performance.timeOrigin + performance.now() };
        const index = receiver!.received.push(delivery) - 1;
        const { status, delayMs = 0, body = `status ${status}` } = receiver!.behaviour(delivery, index);
        const answer = () => {
          if (!response.destroyed) response.writeHead(status, { 'content-type': 'text/plain' }).end(body);
        };
        if (delayMs > 0) setTimeout(answer, delayMs).unref();
        else answer();
      });
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}${path}`);
    return receiver;
  }

  /** Message ids (`webhook-id`) received so far, each once. */
  ids(): Set<string> {
    return new Set(this.received.map((delivery) => String(delivery.headers['webhook-id'])));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
