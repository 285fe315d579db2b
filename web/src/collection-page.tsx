import { AddConnection } from './add-connection';
import { ConnectionCard } from './connection-card';
import { EntitiesPanel } from './entities-panel';
import { CollectionPageDocument } from './generated';
import { SignInOutcomeNote, type SignInOutcome } from './sign-in-return';
import { ErrorNote, Section, StatusBadge, useApi, useLoad } from './ui';

/** The collection page's views, each at its own address: #/collections/:id and #/collections/:id/entities. */
export type CollectionTab = 'connections' | 'entities';

function Tabs({ readableId, tab }: { readableId: string; tab: CollectionTab }) {
  const base = `#/collections/${encodeURIComponent(readableId)}`;
  const tabs: [CollectionTab, string, string][] = [
    ['connections', 'Connections', base],
    ['entities', 'Entities', `${base}/entities`],
  ];
  return (
    <nav className="tabs" aria-label="Collection views">
      {tabs.map(([name, label, href]) => (
        <a key={name} href={href} aria-current={tab === name ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

export function CollectionPage({ readableId, tab, signInOutcome, onOutcomeSeen }: { readableId: string; tab: CollectionTab; signInOutcome: SignInOutcome | null; onOutcomeSeen(): void }) {
  const api = useApi();
  const { data, error, reload } = useLoad(() => api.request(CollectionPageDocument, { readableId }), [readableId]);
  if (error) return <ErrorNote error={error} />;
  if (!data) return <p>Loading…</p>;
  if (!data.collection) return <p role="alert">No collection “{readableId}” in this organization.</p>;
  const connectionNames = new Map(data.sourceConnections.map((connection) => [connection.id, connection.name]));
  return (
    <>
      <p className="crumbs">
        <a href="#/">Collections</a> / {data.collection.name}
      </p>
      <h1>
        {data.collection.name} <StatusBadge status={data.collection.status} />
      </h1>
      <p>
        <code>{data.collection.readableId}</code> · model {data.collection.embeddingModelName} ·{' '}
        <a href={`#/collections/${encodeURIComponent(readableId)}/search`}>Search this collection</a>
      </p>
      <Tabs readableId={readableId} tab={tab} />
      {tab === 'entities' ? (
        <EntitiesPanel readableId={readableId} connectionNames={connectionNames} />
      ) : (
        <>
          {signInOutcome && (
            <SignInOutcomeNote outcome={signInOutcome} connectionName={signInOutcome.connectionId ? (connectionNames.get(signInOutcome.connectionId) ?? null) : null} onDismiss={onOutcomeSeen} />
          )}
          <Section title="Connections">
            {data.sourceConnections.length === 0 && <p>No connections yet: add one below.</p>}
            {data.sourceConnections.map((connection) => (
              <ConnectionCard key={connection.id} connection={connection} readableId={readableId} onChanged={reload} />
            ))}
          </Section>
          <AddConnection readableId={readableId} onCreated={reload} />
        </>
      )}
    </>
  );
}
