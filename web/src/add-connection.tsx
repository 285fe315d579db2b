import { useState, type FormEvent } from 'react';
import type { ApiError } from './api';
import { CreateConnectionDocument, SourcesDocument, type FieldFieldsFragment, type SourcesQuery } from './generated';
import { goToSignIn, returnUrlFor } from './sign-in-return';
import { collect, FieldSet, issueAt, type Values } from './source-fields';
import { asApiError, ErrorNote, Section, useApi, useLoad } from './ui';

type Source = SourcesQuery['sources'][number];

/**
 * How a connection signs in: the source's credential fields (`direct`: keys, a pasted token), the browser with the
 * operator's OAuth app (`oauth_browser`), or the browser with the user's own app (`oauth_byoc`).
 */
type SignInWay = 'fields' | 'browser' | 'own_app';

/** The ways the catalog offers for a source, in the order the form lists them. */
function signInWaysOf(source: Source): SignInWay[] {
  const ways: SignInWay[] = [];
  // requiresByoc: no operator app is registered for the source, so the browser sign-in needs the user's own.
  if (source.authMethods.includes('oauth_browser') && !source.requiresByoc) ways.push('browser');
  if (source.authMethods.includes('oauth_byoc')) ways.push('own_app');
  if (source.authMethods.includes('direct')) ways.push('fields');
  return ways;
}

const WAY_LABELS: Record<SignInWay, (source: Source) => string> = {
  browser: (source) => `Sign in with ${source.name}`,
  own_app: () => 'Sign in with your own OAuth app',
  fields: (source) => (source.authMethods.length > 1 ? 'Paste a token' : 'Credentials'),
};

/** The own app's client, as fields of the form (named as the service's 422 issues name them). */
const OWN_APP_FIELDS: FieldFieldsFragment[] = [
  { name: 'client_id', title: 'Client ID', description: null, type: 'string', itemsType: null, required: true, isSecret: false, default: null, enumValues: null },
  {
    name: 'client_secret',
    title: 'Client secret',
    description: 'Sealed with the connection and never shown again; may be left out for a public (PKCE) client.',
    type: 'string',
    itemsType: null,
    required: false,
    isSecret: true,
    default: null,
    enumValues: null,
  },
];

function SignInWayChoice({ source, ways, way, setWay }: { source: Source; ways: SignInWay[]; way: SignInWay; setWay(way: SignInWay): void }) {
  return (
    <fieldset>
      <legend>Sign-in</legend>
      <div className="checks" role="radiogroup" aria-label="How to sign in">
        {ways.map((option) => (
          <label key={option}>
            <input type="radio" name="sign-in-way" value={option} checked={way === option} onChange={() => setWay(option)} /> {WAY_LABELS[option](source)}
          </label>
        ))}
      </div>
      {source.requiresByoc && (
        <small className="hint">
          No OAuth app is registered for {source.name} on this server: sign in with an app of your own{ways.includes('fields') ? ', or paste a token' : ''}.
        </small>
      )}
      {way !== 'fields' && <small className="hint">You will be sent to {source.name} to sign in, and brought back here.</small>}
    </fieldset>
  );
}

/**
 * Adds a connection with a form built from the catalog's field schemas; the service's 422 issues show at their
 * fields. A browser sign-in creates the connection, then sends the browser to the provider, which brings it back
 * to this collection's page with the outcome.
 */
export function AddConnection({ readableId, onCreated }: { readableId: string; onCreated(): void }) {
  const api = useApi();
  const { data, error: loadError } = useLoad(() => api.request(SourcesDocument, {}), []);
  const [shortName, setShortName] = useState('');
  const [name, setName] = useState('');
  const [cron, setCron] = useState('');
  const [config, setConfig] = useState<Values>({});
  const [auth, setAuth] = useState<Values>({});
  const [ownApp, setOwnApp] = useState<Values>({});
  const [chosenWay, setWay] = useState<SignInWay | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const source = data?.sources.find((s) => s.shortName === shortName);
  const ways = source ? signInWaysOf(source) : [];
  const way = chosenWay && ways.includes(chosenWay) ? chosenWay : (ways[0] ?? 'fields');
  const authFields = way === 'fields' ? (source?.authFields?.fields ?? []) : [];

  const authentication = () => {
    if (way === 'browser') return {};
    if (way === 'own_app') {
      const client = collect(OWN_APP_FIELDS, ownApp) as { client_id?: string; client_secret?: string };
      return { clientId: client.client_id ?? null, clientSecret: client.client_secret ?? null };
    }
    return authFields.length ? { credentials: collect(authFields, auth) } : null;
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!source) return;
    try {
      const { createSourceConnection: created } = await api.request(CreateConnectionDocument, {
        input: {
          shortName,
          readableCollectionId: readableId,
          name: name || null,
          config: collect(source.configFields.fields, config),
          authentication: authentication(),
          schedule: cron ? { cron } : null,
          ...(way === 'fields' ? {} : { redirectUrl: returnUrlFor(readableId) }),
        },
      });
      if (way !== 'fields') return goToSignIn(created.auth.authUrl);
      setError(null);
      setConfig({});
      setAuth({});
      setName('');
      onCreated();
    } catch (failure) {
      setError(asApiError(failure));
    }
  };

  const choose = (next: string) => {
    setShortName(next);
    setConfig({});
    setAuth({});
    setOwnApp({});
    setWay(null);
    setError(null);
  };

  return (
    <Section title="Add a connection">
      <ErrorNote error={loadError} />
      <form onSubmit={submit} aria-label="Add a connection">
        <div className="field">
          <label htmlFor="source">Source</label>
          <select id="source" required value={shortName} onChange={(e) => choose(e.target.value)}>
            <option value="">Choose a source…</option>
            {data?.sources.map((s) => (
              <option key={s.shortName} value={s.shortName}>
                {s.name}
              </option>
            ))}
          </select>
          {source?.description && <small className="hint">{source.description}</small>}
        </div>
        {source && (
          <>
            <div className="field">
              <label htmlFor="connection-name">Connection name</label>
              <input id="connection-name" value={name} placeholder={source.name} onChange={(e) => setName(e.target.value)} />
            </div>
            {source.configFields.fields.length > 0 && (
              <FieldSet legend="Configuration" fields={source.configFields.fields} group="config" values={config} setValues={setConfig} issues={error?.issues} />
            )}
            {ways.length > 1 && <SignInWayChoice source={source} ways={ways} way={way} setWay={setWay} />}
            {way === 'own_app' && (
              <FieldSet legend="Your OAuth app" fields={OWN_APP_FIELDS} group="authentication" values={ownApp} setValues={setOwnApp} issues={error?.issues}>
                {/* The service's callback, as the catalog says it: what sign-ins send the provider as redirect_uri. */}
                {source.oauthRedirectUri && (
                  <small className="hint">
                    Register this redirect URI (callback URL) in your app: <code>{source.oauthRedirectUri}</code>
                  </small>
                )}
              </FieldSet>
            )}
            {authFields.length > 0 && (
              <FieldSet legend="Credentials" fields={authFields} group="credentials" values={auth} setValues={setAuth} issues={error?.issues} />
            )}
            <div className="field">
              <label htmlFor="cron">Schedule (cron, UTC; empty for none)</label>
              <input id="cron" value={cron} placeholder="0 * * * *" onChange={(e) => setCron(e.target.value)} aria-invalid={error && issueAt(error.issues, 'schedule', 'cron') ? true : undefined} />
            </div>
            <ErrorNote error={error} />
            <button type="submit">{way === 'browser' ? WAY_LABELS.browser(source) : way === 'own_app' ? 'Continue to sign in' : 'Connect and sync'}</button>
          </>
        )}
      </form>
    </Section>
  );
}
