/** How the model endpoints (embeddings, rerank) describe a failed HTTP call in errors and logs. */

/** `: <message>` from OpenAI-style (`{error: {message}}`), TEI/Ollama-style (`{error: "…"}`) or plain bodies. */
export function describeError(text: string): string {
  let message: unknown = text;
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown; detail?: unknown };
    const error = body?.error;
    message = (typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : error) ?? body?.message ?? body?.detail ?? text;
  } catch {
    // not JSON: the raw text
  }
  const clean = (typeof message === 'string' ? message : JSON.stringify(message)).replace(/\s+/g, ' ').trim().slice(0, 300);
  return clean ? `: ${clean}` : '';
}

/** Why a request got no answer: the network error's code (ECONNREFUSED, ENOTFOUND…) or message. */
export function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}
