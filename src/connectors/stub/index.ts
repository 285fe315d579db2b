import { setTimeout as sleep } from 'node:timers/promises';
import { seededRandom } from '../../shared/seeded-random.js';
import { CredentialsRejectedError, type Connector, type SourceEntity, type SourceItem } from '../connector.js';

/**
 * A deterministic generated source for tests and benchmarks. Entity `i` always has the same id,
 * place in the hierarchy and text for a given seed; `revision` changes the text of every tenth
 * entity, and `entity_count` adds or removes entities at the end, so a re-sync has exact counts.
 *
 * Incremental runs (a cursor from the previous run) yield only what changed since it.
 */
const WORDS = (
  'data sync vector search index query collection source entity chunk embed cursor schedule worker ' +
  'cancel pipeline hash update insert delete folder document report meeting note design review plan ' +
  'customer revenue growth market product release feature bug test deploy cluster memory latency ' +
  'protein cell gene therapy clinical trial patient dose risk study analysis result evidence model'
).split(' ');

const SIZES = { small: 240, medium: 2400, large: 24000 } as const;

interface StubConfig {
  entity_count: number;
  seed: number;
  size_mix: 'small' | 'medium' | 'large' | 'mixed';
  hierarchy_depth: number;
  code_files: boolean;
  delay_ms: number;
  fail_after: number | null;
  revision: number;
}

const FANOUT = 10;

function sizeOf(config: StubConfig, next: () => number): number {
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

export function stubEntity(i: number, config: StubConfig): SourceEntity {
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

const connector: Connector = {
  shortName: 'stub',
  name: 'Stub',
  description: 'Deterministic generated entities for tests and benchmarks: count, size mix, hierarchy, code files, delays and failures are configurable.',
  authMethods: ['direct', 'oauth_token'],
  authFields: [
    { name: 'token', title: 'Token', description: 'Any value; "rejected" is refused at connect time, "revoked" at sync time.', type: 'string', required: true, isSecret: true },
  ],
  configFields: [
    { name: 'entity_count', title: 'Entity count', type: 'integer', required: false, isSecret: false, default: 100, minimum: 0, maximum: 10_000_000 },
    { name: 'seed', title: 'Seed', type: 'integer', required: false, isSecret: false, default: 42 },
    { name: 'size_mix', title: 'Size mix', type: 'string', required: false, isSecret: false, default: 'mixed', enumValues: ['small', 'medium', 'large', 'mixed'] },
    { name: 'hierarchy_depth', title: 'Hierarchy depth', type: 'integer', required: false, isSecret: false, default: 2, minimum: 0, maximum: 6 },
    { name: 'code_files', title: 'Include code files', type: 'boolean', required: false, isSecret: false, default: false },
    { name: 'delay_ms', title: 'Delay per entity (ms)', type: 'integer', required: false, isSecret: false, default: 0, minimum: 0, maximum: 60_000 },
    { name: 'fail_after', title: 'Fail after N entities', type: 'integer', required: false, isSecret: false, minimum: 0 },
    { name: 'revision', title: 'Revision', description: 'Changing it changes the text of every tenth entity.', type: 'integer', required: false, isSecret: false, default: 0, minimum: 0 },
  ],
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['testing'],
  outputEntityDefinitions: ['StubDocument', 'StubCodeFile', 'StubFolder'],
  // The token is never sent anywhere: it is only compared with "rejected" and "revoked".
  credentialTargets: () => [],

  async validate({ credentials }) {
    if (credentials.token === 'rejected') throw new CredentialsRejectedError('The stub source refuses the token "rejected"');
  },

  sync({ config: raw, credentials, cursor, signal, expectTotal }) {
    const config = { fail_after: null, ...raw } as StubConfig;
    const previous = cursor as { entity_count: number; revision: number; seed: number } | null;
    // A cursor from another seed or folder shape describes other entities: start over.
    const incremental = previous !== null && previous.seed === config.seed;
    return {
      complete: !incremental,
      nextCursor: () => ({ entity_count: config.entity_count, revision: config.revision, seed: config.seed }),
      items: (async function* (): AsyncGenerator<SourceItem> {
        if (credentials.token === 'revoked') throw new CredentialsRejectedError('The stub source no longer accepts this token');
        if (!incremental) expectTotal?.(fullRunSize(config));
        const emitted = new Set<string>();
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
          const changed = !incremental || i >= previous.entity_count || (i % 10 === 0 && previous.revision !== config.revision);
          if (!incremental) yield* folders(i);
          else if (changed && i >= previous.entity_count) yield* folders(i);
          if (changed) yield stubEntity(i, config);
        }
        if (incremental) {
          for (let i = config.entity_count; i < previous.entity_count; i++) yield { delete: `stub-${i}` };
        }
      })(),
    };
  },
};

export default connector;
