import { StrictMode, useCallback, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Api, savedCredentials, saveCredentials, type Credentials } from './api';
import { CollectionPage } from './collection-page';
import { CollectionsPage } from './collections-page';
import { ViewerDocument, type ViewerQuery } from './generated';
import { SearchPage } from './search-page';
import { SignIn } from './sign-in';
import { takeSignInOutcome } from './sign-in-return';
import { ApiContext } from './ui';
import { WebhooksPage } from './webhooks-page';
import './styles.css';

/**
 * Hash routes, so no console path can shadow an API path: #/, #/collections/:id, #/collections/:id/entities,
 * #/collections/:id/search, #/webhooks.
 */
const readRoute = () => window.location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);

function useRoute(): string[] {
  const [route, setRoute] = useState(readRoute);
  useEffect(() => {
    const onChange = () => setRoute(readRoute());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

// Read once as the page loads (the query is then cleared): a browser sign-in's outcome, shown until dismissed.
const returnedFromSignIn = takeSignInOutcome();

function App() {
  const [credentials, setCredentials] = useState<Credentials | null>(savedCredentials);
  const [signInOutcome, setSignInOutcome] = useState(returnedFromSignIn);
  const [viewer, setViewer] = useState<ViewerQuery['viewer'] | null>(null);
  const api = useMemo(() => (credentials ? new Api(credentials) : null), [credentials]);
  const route = useRoute();
  useEffect(() => () => api?.dispose(), [api]);

  const signIn = (next: Credentials, who: ViewerQuery['viewer']) => {
    saveCredentials(next);
    setViewer(who);
    setCredentials(next);
  };
  const signOut = useCallback(() => {
    saveCredentials(null);
    setViewer(null);
    setCredentials(null);
  }, []);
  // Credentials kept from earlier in the tab may have been revoked since: then sign in again.
  useEffect(() => {
    if (!api) return;
    api.request(ViewerDocument, {}).then((data) => setViewer(data.viewer), signOut);
  }, [api, signOut]);

  if (!api) return <SignIn onSignedIn={signIn} />;
  const [section, id, sub] = route;
  return (
    <ApiContext.Provider value={api}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <a className="brand" href="#/">
          Catchment
        </a>
        <nav aria-label="Main">
          <a href="#/">Collections</a>
          <a href="#/webhooks">Webhooks</a>
          <a href="/graphql" target="_blank" rel="noreferrer">
            GraphQL playground
          </a>
          <a href="/docs" target="_blank" rel="noreferrer">
            REST reference
          </a>
        </nav>
        <div className="who">
          {viewer && (
            <span>
              {viewer.organization.name} · {viewer.kind === 'api_key' ? 'API key' : viewer.email} ({viewer.role})
            </span>
          )}
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {section === 'collections' && id && sub === 'search' ? (
          <SearchPage readableId={id} />
        ) : section === 'collections' && id ? (
          <CollectionPage readableId={id} tab={sub === 'entities' ? 'entities' : 'connections'} signInOutcome={signInOutcome} onOutcomeSeen={() => setSignInOutcome(null)} />
        ) : section === 'webhooks' ? (
          <WebhooksPage canChange={credentials?.kind === 'bearer' && (viewer?.role === 'admin' || viewer?.role === 'owner')} />
        ) : (
          <CollectionsPage />
        )}
      </main>
    </ApiContext.Provider>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
