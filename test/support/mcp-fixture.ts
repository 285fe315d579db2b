import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ProgressNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ChatRequest, ScriptedReply } from './fake-chat-completions.js';
import { waitForJob, type Api } from './sync-helpers.js';

const FOLDER = { entity_id: 'folder-field', name: 'Field folder', entity_type: 'folder' };

/** A long document: eight sections of a few hundred words, so it is several chunks. */
const GUIDE = Array.from({ length: 8 }, (_, i) => {
  const n = i + 1;
  const link = n === 1 ? ' Tide times: https://tides.example/table.' : n === 6 ? ' Gannet colony map: https://birds.example/gannet.' : '';
  return `## Section ${n}\n\nSection ${n} of the field notes guide.${link} ${`Walk the shore path and record what you see in section ${n}. `.repeat(12)}`;
}).join('\n\n');

/** A small hierarchy pushed through the push source: a folder, two notes and a long guide under it. */
export const MCP_DOCUMENTS = [
  { id: FOLDER.entity_id, name: FOLDER.name, entity_type: FOLDER.entity_type, text: 'Field folder: everything written on the coast.' },
  { id: 'birds', name: 'Seabirds', entity_type: 'note', text: 'The gannet colony on the north cliff holds about two thousand nests.', breadcrumbs: [FOLDER], web_url: 'https://notes.example/birds' },
  { id: 'tides', name: 'Tides', entity_type: 'note', text: 'Field notes on spring tides: the lowest ebb uncovers the mussel beds.', breadcrumbs: [FOLDER], web_url: 'https://notes.example/tides' },
  { id: 'guide', name: 'Field guide', entity_type: 'guide', text: GUIDE, breadcrumbs: [FOLDER], web_url: 'https://notes.example/guide' },
];

/** Creates the collection `field-notes` with a push connection holding MCP_DOCUMENTS; returns the connection id. */
export async function pushDocuments(call: Api): Promise<string> {
  await call('POST', '/collections', { name: 'Field notes', readable_id: 'field-notes' });
  const connection = (await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: 'field-notes', name: 'Notebook' })).body;
  const pushed = await call('POST', `/source-connections/${connection.id}/entities`, { entities: MCP_DOCUMENTS });
  const job = await waitForJob(call, connection.id, pushed.body.job.id, ['COMPLETED', 'FAILED']);
  if (job.status !== 'COMPLETED') throw new Error(`push failed: ${JSON.stringify(job)}`);
  return connection.id;
}

/**
 * The scripted language model: classic's planner gets a plan; the agent searches, then returns
 * (`quick`), or searches on and on, each turn taking 400 ms (`slow`, to be stopped from outside).
 */
export function agentReply(request: ChatRequest, _index: number, mode: 'quick' | 'slow'): ScriptedReply {
  if (!request.tools) return { content: JSON.stringify({ primary_query: 'gannet nest colony', variations: [], filter_groups: [], strategy: 'hybrid' }) };
  const turn = request.messages.filter((message) => message.role === 'assistant').length;
  if (mode === 'slow') return { toolCalls: [{ name: 'search', arguments: { query: `gannet ${turn}` } }], delayMs: 400 };
  return turn === 0 ? { toolCalls: [{ name: 'search', arguments: { query: 'gannet' } }] } : { toolCalls: [{ name: 'return_results_to_user', arguments: {} }] };
}

export interface ProgressStep {
  progress: number;
  message?: string;
}

const progressListeners = new WeakMap<Client, Map<string, (step: ProgressStep) => void>>();

/**
 * The progress notifications a client receives for `token` (sent as the call's `_meta.progressToken`),
 * in order, each also passed to `onEach`. Read through the client's own notification handler rather than
 * `onprogress`: the SDK drops a request's progress handler as soon as it reads the result, before it
 * runs the notifications read with it, so `onprogress` misses the last steps when they come together.
 */
export function collectProgress(client: Client, token: string, onEach?: (step: ProgressStep) => void): ProgressStep[] {
  let listeners = progressListeners.get(client);
  if (!listeners) {
    const byToken = new Map<string, (step: ProgressStep) => void>();
    client.setNotificationHandler(ProgressNotificationSchema, ({ params }) => byToken.get(String(params.progressToken))?.({ progress: params.progress, message: params.message }));
    progressListeners.set(client, byToken);
    listeners = byToken;
  }
  const steps: ProgressStep[] = [];
  listeners.set(token, (step) => {
    steps.push(step);
    onEach?.(step);
  });
  return steps;
}
