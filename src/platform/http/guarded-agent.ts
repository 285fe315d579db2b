/**
 * The undici dispatchers through which the platform reaches sources (a connection's HTTP client, the
 * OAuth token endpoint, the web sources' client): every socket they open is checked against the
 * operator's address policy for sources (`sourceAddressProblem`) when it connects, so neither a
 * redirect nor a DNS answer that changes after validation leads to a refused address.
 */
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { bareHost, guardedLookup, RefusedTargetError, sourceAddressProblem } from '../../shared/target-guard.js';

/** A new agent whose connections only reach the addresses the policy allows (its owner closes it). */
export function createGuardedAgent(allowPrivateNetworks: boolean): Agent {
  const problemOf = (address: string) => sourceAddressProblem(address, allowPrivateNetworks);
  const connect = buildConnector({ lookup: guardedLookup(problemOf) });
  return new Agent({
    connect: (options, callback) => {
      // An address in the URL is connected to without a lookup: check it here.
      const host = bareHost(options.hostname);
      const problem = isIP(host) ? problemOf(host) : null;
      if (problem) return callback(new RefusedTargetError(`refused: ${problem}`), null);
      return connect(options, callback);
    },
  });
}

const agents = new Map<boolean, Agent>();

/** One pooled agent per policy for the process, never closed: runs share their keep-alive connections. */
export function guardedSourceAgent(allowPrivateNetworks: boolean): Agent {
  let agent = agents.get(allowPrivateNetworks);
  if (!agent) {
    agent = createGuardedAgent(allowPrivateNetworks);
    agents.set(allowPrivateNetworks, agent);
  }
  return agent;
}

/** The address policy's refusal behind a failed request, or null when it failed for another reason. */
export function refusalOf(error: unknown): RefusedTargetError | null {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof RefusedTargetError) return cause;
  }
  return null;
}

/**
 * Why a request got no HTTP answer (DNS, refused connection, TLS, timeout), in words fit for a job's
 * error: the failure's message ("connect ECONNREFUSED 127.0.0.1:9", "other side closed"), else its
 * code (an AggregateError of every address tried has none); a timeout says how long was waited when
 * `timeoutMs` is given. Every client that reaches sources or the raw data store words failures with it.
 */
export function networkReason(error: unknown, timeoutMs?: number): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') return timeoutMs === undefined ? 'no answer in time' : `no answer within ${Math.round(timeoutMs / 1000)} s`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.message || cause?.code || (error instanceof Error ? error.message : String(error));
}
