/**
 * The console's side of a browser sign-in (OAuth): where the provider's round trip brings the browser back, and
 * what the service said there (`status=success|error`, `source_connection_id`, `error`, `error_description`).
 */

/** What a sign-in's redirect brought back. */
export interface SignInOutcome {
  status: 'success' | 'error';
  connectionId: string | null;
  error: string | null;
  description: string | null;
}

/** The console's own page for a collection: a sign-in started there returns there, with its outcome in the query. */
export function returnUrlFor(readableId: string): string {
  return new URL(`#/collections/${encodeURIComponent(readableId)}`, window.location.href.split(/[?#]/)[0]).toString();
}

/** Sends the browser to the provider; it comes back to the page named at returnUrlFor. Only to http(s): a `javascript:` address would run here. */
export function goToSignIn(authUrl: string | null): void {
  if (!authUrl) throw new Error('The service gave no sign-in address for this connection');
  if (!/^https?:$/.test(new URL(authUrl).protocol)) throw new Error('The sign-in address of this connection is not an http(s) address');
  window.location.assign(authUrl);
}

/**
 * The outcome in the page's address, if it came back from a sign-in. The query is then removed from the address
 * bar, so reloading or bookmarking the page does not show it again.
 */
export function takeSignInOutcome(): SignInOutcome | null {
  const query = new URLSearchParams(window.location.search);
  const status = query.get('status');
  if (status !== 'success' && status !== 'error') return null;
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.hash}`);
  return { status, connectionId: query.get('source_connection_id'), error: query.get('error'), description: query.get('error_description') };
}

/** The outcome, said once on the collection page the sign-in returned to, naming the connection when it is there. */
export function SignInOutcomeNote({ outcome, connectionName, onDismiss }: { outcome: SignInOutcome; connectionName: string | null; onDismiss(): void }) {
  const who = connectionName ? `“${connectionName}”` : 'The connection';
  return (
    <div className={outcome.status === 'success' ? 'notice success' : 'notice failure'} role={outcome.status === 'success' ? 'status' : 'alert'}>
      {outcome.status === 'success' ? (
        <p>Signed in: {who} is connected.</p>
      ) : (
        <p>
          Sign-in failed{connectionName ? ` for ${who}` : ''}: {outcome.description ?? 'the provider or the service refused it.'}{' '}
          {outcome.error && <span className="code">({outcome.error})</span>}
        </p>
      )}
      <button type="button" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}
