/**
 * Where a REST search's time goes inside the server, one request at a time: from the request's
 * arrival (the HTTP server's 'request' event, headers parsed) to the search service, from there to
 * the index query, the index query itself, back to the service's answer, and from it to the
 * response's last byte handed to the socket. With the client's own latency, the rest is the client
 * and the loopback (request writing, response parsing in the client's process).
 *
 * The service and index methods are wrapped on their instances while measuring, and restored after.
 * Requests must not overlap: each span belongs to the one request in flight.
 */
import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { SearchService } from '../src/modules/search/search.service.js';
import type { VectorIndex } from '../src/platform/vectors/vector-index.js';
import { percentile } from './stats.js';

const MARKS = ['arrived', 'serviceStarted', 'indexStarted', 'indexEnded', 'serviceEnded', 'finished'] as const;
type Mark = (typeof MARKS)[number];

/** The spans between consecutive marks, and what each is named when printed. */
const SPANS: { from: Mark; to: Mark; name: string }[] = [
  { from: 'arrived', to: 'serviceStarted', name: 'HTTP in (routing, body, OpenAPI, auth, GraphQL to the resolver)' },
  { from: 'serviceStarted', to: 'indexStarted', name: 'service before the index (scope, query embedding)' },
  { from: 'indexStarted', to: 'indexEnded', name: 'index search (LanceDB queries, fusion, page)' },
  { from: 'indexEnded', to: 'serviceEnded', name: 'service after the index (result views)' },
  { from: 'serviceEnded', to: 'finished', name: 'HTTP out (GraphQL completion, REST body, JSON, socket write)' },
];

/** Milliseconds per span, and arrival to last byte, each list ascending, for the requests completed while measuring. */
export interface MeasuredSpans {
  spans: { name: string; latencies: number[] }[];
  serverTotal: number[];
}

export interface RestSpans {
  stop(): MeasuredSpans;
}

/** Starts marking every request `http` receives and every `instant` search of `search` on `index`. */
export function measureRestSpans(http: Server, search: SearchService, index: VectorIndex): RestSpans {
  const done: Partial<Record<Mark, number>>[] = [];
  let current: Partial<Record<Mark, number>> = {};
  const mark = (name: Mark) => {
    current[name] = performance.now();
  };
  const onRequest = (_req: unknown, res: { once(event: 'finish', listener: () => void): void }) => {
    const request: Partial<Record<Mark, number>> = { arrived: performance.now() };
    current = request;
    res.once('finish', () => {
      request.finished = performance.now();
      if (MARKS.every((name) => request[name] !== undefined)) done.push(request);
    });
  };
  http.prependListener('request', onRequest);
  const restore = [wrap(search, 'instant', mark, 'serviceStarted', 'serviceEnded'), wrap(index, 'search', mark, 'indexStarted', 'indexEnded')];
  return {
    stop() {
      http.off('request', onRequest);
      for (const undo of restore) undo();
      const between = (from: Mark, to: Mark) => done.map((request) => request[to]! - request[from]!).sort((a, b) => a - b);
      return { spans: SPANS.map(({ from, to, name }) => ({ name, latencies: between(from, to) })), serverTotal: between('arrived', 'finished') };
    },
  };
}

/** Marks `before` and `after` around each call of the instance's async method; returns what restores it. */
function wrap<T extends object, K extends keyof T>(target: T, method: K, mark: (name: Mark) => void, before: Mark, after: Mark): () => void {
  const original = target[method] as (...args: unknown[]) => Promise<unknown>;
  const own = Object.hasOwn(target, method);
  const marked = async function (this: T, ...args: unknown[]) {
    mark(before);
    try {
      return await original.apply(this, args);
    } finally {
      mark(after);
    }
  };
  target[method] = marked as T[K];
  return () => {
    if (own) target[method] = original as T[K];
    else delete target[method]; // the prototype's method shows again
  };
}

/** Lines of p50 per span, with the server's total and the client's latency beside it. */
export function describeRestSpans({ spans, serverTotal }: MeasuredSpans, clientLatencies: number[]): string[] {
  const ms = (value: number) => `${value.toFixed(2)} ms`;
  const p50 = (values: number[]) => percentile(values, 50);
  const server = p50(serverTotal);
  const client = p50(clientLatencies);
  return [
    ...spans.map(({ name, latencies }) => `  ${ms(p50(latencies)).padStart(9)}  ${name}`),
    `  ${ms(server).padStart(9)}  in the server, arrival to the last byte (p50 over ${serverTotal.length} requests)`,
    `  ${ms(client - server).padStart(9)}  the client and the loopback (client p50 ${ms(client)} less the server's)`,
  ];
}
