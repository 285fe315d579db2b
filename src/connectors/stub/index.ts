import { setTimeout as sleep } from 'node:timers/promises';
import { seededRandom } from '../../shared/seeded-random.js';
import { z } from 'zod';
import { CredentialsRejectedError, type Connector, type SourceEntity, type SourceItem } from '../connector.js';
import { httpBaseUrl, nonBlankString } from '../contract/schemas.js';

/**
 * A deterministic generated source for tests and benchmarks. Entity `i` always has the same id,
 * place in the hierarchy and text for a given seed; `revision` changes the text of every tenth
 * entity, and `entity_count` adds or removes entities at the end, so a re-sync has exact counts.
 *
 * Incremental runs (a cursor from the previous run) yield only what changed since it. Every
 * CHECKPOINT_EVERY entities a run saves a checkpoint; a run resumed from one yields the entities
 * after it (and what changed before it since), and is not complete.
 *
 * Authentication: a token typed as direct credentials, or OAuth 2 against the endpoints its config
 * names (an OAuth token is only fetched, never sent: the stub talks to nobody).
 */
const WORDS = (
  'data sync vector search index query collection source entity chunk embed cursor schedule worker ' +
  'cancel pipeline hash update insert delete folder document report meeting note design review plan ' +
  'customer revenue growth market product release feature bug test deploy cluster memory latency ' +
  'protein cell gene therapy clinical trial patient dose risk study analysis result evidence model'
).split(' ');

const SIZES = { small: 240, medium: 2400, large: 24000 } as const;

const config = z.strictObject({
  entity_count: z.int().min(0).max(10_000_000).default(100).meta({ title: 'Entity count' }),
  seed: z.int().default(42).meta({ title: 'Seed' }),
  size_mix: z.enum(['small', 'medium', 'large', 'mixed']).default('mixed').meta({ title: 'Size mix' }),
  hierarchy_depth: z.int().min(0).max(6).default(2).meta({ title: 'Hierarchy depth' }),
  code_files: z.boolean().default(false).meta({ title: 'Include code files' }),
  delay_ms: z.int().min(0).max(60_000).default(0).meta({ title: 'Delay per entity (ms)' }),
  fail_after: z.int().min(0).nullable().default(null).meta({ title: 'Fail after N entities' }),
  revision: z.int().min(0).default(0).meta({ title: 'Revision', description: 'Changing it changes the text of every tenth entity.' }),
  oauth_authorize_url: httpBaseUrl('https://stub.example/oauth/authorize').default('https://stub.example/oauth/authorize').meta({ title: 'OAuth authorization endpoint', description: 'Where a browser sign-in is sent (tests point it at a local server).' }),
  oauth_token_url: httpBaseUrl('https://stub.example/oauth/token').default('https://stub.example/oauth/token').meta({ title: 'OAuth token endpoint', description: 'Where codes are exchanged and tokens refreshed (tests point it at a local server).' }),
});

export type StubConfig = z.infer<typeof config>;

/** The settings that decide what entity `i` is. */
type EntitySettings = Pick<StubConfig, 'seed' | 'size_mix' | 'hierarchy_depth' | 'code_files' | 'revision'>;

const credentials = z.strictObject({
  token: nonBlankString().meta({ title: 'Token', description: 'Any value; "rejected" is refused at connect time, "revoked" at sync time.', secret: true }),
});

/**
 * The state after entity `resume_from - 1` of the run with these settings, when it is a checkpoint;
 * without `resume_from`, the end of a finished run.
 */
const cursor = z.object({
  entity_count: z.int().min(0),
  revision: z.int().min(0),
  seed: z.int(),
  resume_from: z.int().min(0).optional(),
});

type StubCursor = z.infer<typeof cursor>;

/** A run saves a checkpoint after every this many entity indices. */
export const CHECKPOINT_EVERY = 100;

const FANOUT = 10;

function sizeOf(config: EntitySettings, next: () => number): number {
  if (config.size_mix !== 'mixed') return SIZES[config.size_mix];
  const roll = next();
  return roll < 0.7 ? SIZES.small : roll < 0.95 ? SIZES.medium : SIZES.large;
}

function sentence(next: () => number, bytes: number): string {
  const words: string[] = [];
  let length = 0;
  while (length < bytes) {
    const word = WORDS[Math.floor(next() * WORDS.length)]!;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ');
}

/** Folder chain of entity `i`: at depth d the folder index is floor(i / FANOUT^(depth-d)). */
function breadcrumbsOf(i: number, depth: number) {
  const crumbs = [];
  for (let level = 1; level <= depth; level++) {
    const folder = Math.floor(i / FANOUT ** (depth - level + 1));
    const id = `folder-${level}-${folder}`;
    crumbs.push({ entityId: id, name: `Folder ${level}.${folder}`, entityType: 'stub_folder' });
  }
  return crumbs;
}

export function stubEntity(i: number, config: EntitySettings): SourceEntity {
  const next = seededRandom(config.seed * 1_000_003 + i);
  const isCode = config.code_files && i % 7 === 3;
  const revised = i % 10 === 0 && config.revision > 0 ? ` revision ${config.revision}` : '';
  const bytes = sizeOf(config, next);
  const body = isCode
    ? Array.from({ length: Math.max(1, Math.floor(bytes / 120)) }, (_, f) => `export function ${WORDS[(i + f) % WORDS.length]}${f}(input: number): number {\n  // ${sentence(next, 40)}\n  return input * ${f + 1};\n}\n`).join('\n')
    : sentence(next, bytes);
  const name = isCode ? `module_${i}.ts` : `Document ${i}`;
  const created = new Date(Date.UTC(2024, 0, 1) + i * 60_000);
  return {
    entityId: `stub-${i}`,
    entityType: isCode ? 'stub_code_file' : 'stub_document',
    name,
    breadcrumbs: breadcrumbsOf(i, config.hierarchy_depth),
    createdAt: created,
    updatedAt: revised ? new Date(created.getTime() + config.revision * 86_400_000) : created,
    text: `${name}${revised}\n${body}`,
    fields: { index: i, size_class: bytes, revision: revised ? config.revision : 0 },
    webUrl: `https://stub.example/entities/${i}`,
    ...(isCode ? { language: 'typescript' } : {}),
    access: { viewers: null, isPublic: true },
  };
}

/** What a full run yields: every entity and each folder above them (at depth d, entities share a folder per FANOUT^(depth-d+1)). */
function fullRunSize(config: StubConfig): number {
  let folders = 0;
  for (let level = 1; level <= config.hierarchy_depth; level++) folders += Math.ceil(config.entity_count / FANOUT ** (config.hierarchy_depth - level + 1));
  return config.entity_count + folders;
}

const connector: Connector<StubConfig, z.infer<typeof credentials>, StubCursor> = {
  shortName: 'stub',
  name: 'Stub',
  description: 'Deterministic generated entities for tests and benchmarks: count, size mix, hierarchy, code files, delays and failures are configurable.',
  auth: {
    kind: 'oauth2',
    oauth: {
      authorizeUrl: (settings) => settings.oauth_authorize_url,
      tokenUrl: (settings) => settings.oauth_token_url,
      scopes: ['read'],
      pkce: true,
      refresh: 'rotating',
      clientAuthentication: 'basic',
    },
    pasted: { credentials, token: (given) => given.token },
  },
  config,
  cursor,
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['testing'],
  outputEntityDefinitions: ['StubDocument', 'StubCodeFile', 'StubFolder'],
  // The token is never sent anywhere: it is only compared with "rejected" and "revoked".
  credentialTargets: () => [],

  async validate({ credentials: given }) {
    if (given?.token === 'rejected') throw new CredentialsRejectedError('The stub source refuses the token "rejected"');
  },

  sync({ config, credentials: given, tokens, cursor: previous, resuming, checkpoint, signal, expectTotal }) {
    // A cursor from another seed describes other entities: start over.
    const sameEntities = previous !== null && previous.seed === config.seed;
    const resumeFrom = sameEntities && resuming && previous.resume_from !== undefined ? previous.resume_from : null;
    return {
      complete: !sameEntities,
      nextCursor: () => ({ entity_count: config.entity_count, revision: config.revision, seed: config.seed }),
      items: (async function* (): AsyncGenerator<SourceItem> {
        // An OAuth connection's token is fetched (and so refreshed when due) as a real source's would be.
        const token = given?.token ?? (tokens ? await tokens.accessToken() : null);
        if (token === 'revoked') throw new CredentialsRejectedError('The stub source no longer accepts this token');
        if (!sameEntities) expectTotal?.(fullRunSize(config));
        const emitted = new Set<string>();
        if (resumeFrom !== null) {
          // Folders of the entities before the checkpoint were yielded (and committed) before it.
          for (let i = 0; i < Math.min(resumeFrom, config.entity_count); i += FANOUT) for (const crumb of breadcrumbsOf(i, config.hierarchy_depth)) emitted.add(crumb.entityId);
        }
        const folders = function* (i: number) {
          for (const crumb of breadcrumbsOf(i, config.hierarchy_depth)) {
            if (emitted.has(crumb.entityId)) continue;
            emitted.add(crumb.entityId);
            const level = Number(crumb.entityId.split('-')[1]);
            yield {
              entityId: crumb.entityId,
              entityType: 'stub_folder',
              name: crumb.name,
              breadcrumbs: breadcrumbsOf(i, config.hierarchy_depth).slice(0, level - 1),
              createdAt: null,
              updatedAt: null,
              text: crumb.name,
              fields: {},
              webUrl: `https://stub.example/folders/${crumb.entityId}`,
            } satisfies SourceEntity;
          }
        };
        for (let i = 0; i < config.entity_count; i++) {
          signal.throwIfAborted();
          if (config.fail_after !== null && i >= config.fail_after) throw new Error(`Stub source failed after ${config.fail_after} entities`);
          if (config.delay_ms > 0) await sleep(config.delay_ms, undefined, { signal });
          const revised = previous !== null && i % 10 === 0 && previous.revision !== config.revision;
          // Resumed: everything after the checkpoint is yielded, before it only what changed since.
          const added = !sameEntities || (resumeFrom !== null ? i >= resumeFrom : i >= previous.entity_count);
          if (added) yield* folders(i);
          if (added || revised) yield stubEntity(i, config);
          if ((i + 1) % CHECKPOINT_EVERY === 0) checkpoint({ entity_count: config.entity_count, revision: config.revision, seed: config.seed, resume_from: i + 1 });
        }
        if (sameEntities) {
          for (let i = config.entity_count; i < previous.entity_count; i++) yield { delete: `stub-${i}` };
        }
      })(),
    };
  },
};

export default connector;
