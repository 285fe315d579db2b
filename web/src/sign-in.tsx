import { useState, type FormEvent } from 'react';
import { Api, type Credentials } from './api';
import { ViewerDocument, type ViewerQuery } from './generated';
import { asApiError, ErrorNote } from './ui';
import type { ApiError } from './api';

export function SignIn({ onSignedIn }: { onSignedIn(credentials: Credentials, viewer: ViewerQuery['viewer']): void }) {
  const [kind, setKind] = useState<Credentials['kind']>('apiKey');
  const [value, setValue] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    const credentials = { kind, value: value.trim() };
    const api = new Api(credentials);
    try {
      const { viewer } = await api.request(ViewerDocument, {});
      onSignedIn(credentials, viewer);
    } catch (failure) {
      setError(asApiError(failure));
    } finally {
      api.dispose();
      setBusy(false);
    }
  };

  return (
    <main className="sign-in" id="main">
      <h1>Catchment console</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <fieldset>
          <legend>Sign in with</legend>
          <label>
            <input type="radio" name="kind" checked={kind === 'apiKey'} onChange={() => setKind('apiKey')} /> an API key
          </label>
          <label>
            <input type="radio" name="kind" checked={kind === 'bearer'} onChange={() => setKind('bearer')} /> a bearer token
          </label>
        </fieldset>
        <label htmlFor="credential">{kind === 'apiKey' ? 'API key' : 'Bearer token'}</label>
        <input id="credential" type="password" autoComplete="off" required value={value} onChange={(e) => setValue(e.target.value)} autoFocus />
        <p className="hint">Kept for this browser tab only (session storage), never saved on the disk.</p>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
