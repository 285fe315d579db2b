import { useState, type FormEvent } from 'react';
import { CollectionEntitiesDocument, type FilterConditionInput } from './generated';
import { ErrorNote, formatDate, Section, TableHead, useApi, useLoad } from './ui';

const PAGE = 50;

/** What the listing is narrowed to: one entity type, one connection, a part of the name. */
interface Narrowing {
  entityType: string | null;
  connectionId: string | null;
  nameContains: string;
}

/** The narrowing as the search filter the service takes (one group: its conditions are ANDed). */
function filterOf(narrowing: Narrowing): { conditions: FilterConditionInput[] }[] | null {
  const conditions: FilterConditionInput[] = [];
  if (narrowing.entityType) conditions.push({ field: 'service_system_metadata.entity_type', operator: 'equals', value: narrowing.entityType });
  // sync_id is the source connection an entity came from.
  if (narrowing.connectionId) conditions.push({ field: 'service_system_metadata.sync_id', operator: 'equals', value: narrowing.connectionId });
  if (narrowing.nameContains) conditions.push({ field: 'name', operator: 'contains', value: narrowing.nameContains });
  return conditions.length ? [{ conditions }] : null;
}

/** A count that narrows the listing to what it counts when chosen, and widens it again when chosen twice. */
function Facet({ label, count, chosen, onChoose }: { label: string; count: number; chosen: boolean; onChoose(): void }) {
  return (
    <li>
      <button type="button" className="facet" aria-pressed={chosen} onClick={onChoose}>
        {label} <span className="count">{count}</span>
      </button>
    </li>
  );
}

/** One labelled list of facets; choosing the chosen one again clears it (onChoose(null)). */
function FacetList<Entry>({
  id,
  title,
  entries,
  keyOf,
  labelOf,
  countOf,
  chosen,
  onChoose,
}: {
  id: string;
  title: string;
  entries: Entry[];
  keyOf(entry: Entry): string;
  labelOf(entry: Entry): string;
  countOf(entry: Entry): number;
  chosen: string | null;
  onChoose(key: string | null): void;
}) {
  return (
    <>
      <span id={id} className="muted">
        {title}
      </span>
      <ul aria-labelledby={id}>
        {entries.map((entry) => {
          const key = keyOf(entry);
          return <Facet key={key} label={labelOf(entry)} count={countOf(entry)} chosen={chosen === key} onChoose={() => onChoose(chosen === key ? null : key)} />;
        })}
      </ul>
    </>
  );
}

/**
 * What a collection holds (the collectionEntities query): its entities page by page, ordered by id, with exact
 * counts by type and by connection of everything the narrowing matches.
 */
export function EntitiesPanel({ readableId, connectionNames }: { readableId: string; connectionNames: Map<string, string> }) {
  const api = useApi();
  const [narrowing, setNarrowing] = useState<Narrowing>({ entityType: null, connectionId: null, nameContains: '' });
  const [nameInput, setNameInput] = useState('');
  const [offset, setOffset] = useState(0);
  // The page is kept with the offset it was read at: while the next one loads, the range still tells what is shown.
  const { data, error } = useLoad(
    () => api.request(CollectionEntitiesDocument, { readableId, filter: filterOf(narrowing), limit: PAGE, offset }).then((page) => ({ ...page, offset })),
    [readableId, narrowing, offset],
  );
  const narrow = (change: Partial<Narrowing>) => {
    setNarrowing({ ...narrowing, ...change });
    setOffset(0);
  };
  const searchName = (event: FormEvent) => {
    event.preventDefault();
    narrow({ nameContains: nameInput.trim() });
  };
  const listing = data?.collectionEntities;
  const shownFrom = data?.offset ?? 0;

  return (
    <Section title="Entities">
      <ErrorNote error={error} />
      <form className="inline" onSubmit={searchName} aria-label="Entities by name">
        <label htmlFor="entity-name">Name contains</label>
        <input id="entity-name" type="search" value={nameInput} onChange={(e) => setNameInput(e.target.value)} />
        <button type="submit">Filter</button>
      </form>
      {listing && (
        <>
          <div className="facets">
            <FacetList
              id="entities-by-type"
              title="By type"
              entries={listing.byType}
              keyOf={(entry) => entry.entityType}
              labelOf={(entry) => entry.entityType}
              countOf={(entry) => entry.count}
              chosen={narrowing.entityType}
              onChoose={(entityType) => narrow({ entityType })}
            />
            <FacetList
              id="entities-by-connection"
              title="By connection"
              entries={listing.bySource}
              keyOf={(entry) => entry.sourceConnectionId}
              labelOf={(entry) => connectionNames.get(entry.sourceConnectionId) ?? entry.sourceName}
              countOf={(entry) => entry.count}
              chosen={narrowing.connectionId}
              onChoose={(connectionId) => narrow({ connectionId })}
            />
          </div>
          {listing.total === 0 ? (
            <p>No entities{filterOf(narrowing) ? ' match' : ' yet: a sync writes them'}.</p>
          ) : (
            <>
              <table aria-label="Entities of the collection">
                <TableHead columns={['Name', 'Type', 'Connection', 'Path', 'Updated', 'Synced', 'Chunks']} />
                <tbody>
                  {listing.items.map((entity) => (
                    <tr key={`${entity.sourceConnectionId}:${entity.entityId}`}>
                      <td title={entity.entityId}>{entity.name}</td>
                      <td>{entity.entityType}</td>
                      <td>{connectionNames.get(entity.sourceConnectionId) ?? entity.sourceName}</td>
                      <td>{entity.breadcrumbs.map((crumb) => crumb.name).join(' / ') || '—'}</td>
                      <td>{formatDate(entity.updatedAt)}</td>
                      <td>{formatDate(entity.syncedAt)}</td>
                      <td>{entity.chunkCount}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <div className="actions pager">
                <button type="button" disabled={shownFrom === 0} onClick={() => setOffset(Math.max(0, shownFrom - PAGE))}>
                  Previous
                </button>
                <span data-testid="entities-range">
                  {shownFrom + 1}–{shownFrom + listing.items.length} of {listing.total}
                </span>
                <button type="button" disabled={shownFrom + PAGE >= listing.total} onClick={() => setOffset(shownFrom + PAGE)}>
                  Next
                </button>
              </div>
            </>
          )}
        </>
      )}
    </Section>
  );
}
