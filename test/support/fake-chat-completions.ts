import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the scripted model answers: text, tool calls (arguments as objects), or an HTTP failure. */
export type ScriptedReply = { content?: string; toolCalls?: { name: string; arguments: Record<string, unknown> }[]; status?: number; delayMs?: number };

export interface ChatRequest {
  model: string;
  messages: { role: string; content: unknown; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; description: string; parameters: unknown } }[];
  response_format?: unknown;
  reasoning_effort?: string;
  authorization?: string;
}

/**
 * A local HTTP server speaking OpenAI's chat-completions protocol (non-streaming), answering from a
 * script: `reply(request, index)` decides each answer, so tests can drive tool-calling agents turn by turn.
 */
export async function startFakeChatCompletions(reply: (request: ChatRequest, index: number) => ScriptedReply) {
  const requests: ChatRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    const request = { ...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest), authorization: req.headers.authorization };
    const index = requests.push(request) - 1;
    const answer = reply(request, index);
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    if (answer.status && answer.status >= 400) {
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'scripted failure', type: 'server_error' } }));
      return;
    }
    const toolCalls = answer.toolCalls?.map((call, i) => ({ id: `call_${index}_${i}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${index}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices: [{ index: 0, message: { role: 'assistant', content: answer.content ?? null, ...(toolCalls?.length ? { tool_calls: toolCalls } : {}) }, finish_reason: toolCalls?.length ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: 100 + index, completion_tokens: 10 + index, total_tokens: 110 + 2 * index },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
