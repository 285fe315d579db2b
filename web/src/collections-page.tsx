import { useEffect, useState, type FormEvent } from 'react';
import { CollectionEventsDocument, CollectionsDocument, CreateCollectionDocument, DeleteCollectionDocument, RenameCollectionDocument } from './generated';
import { ConfirmButton, ErrorNote, formatDate, Section, StatusBadge, TableHead, useAction, useApi, useLoad } from './ui';

export function CollectionsPage() {
  const api = useApi();
  const [search, setSearch] = useState('');
  const { data, error, reload } = useLoad(() => api.request(CollectionsDocument, { search: search || null }), [search]);
  const [name, setName] = useState('');
  const { actionError, act } = useAction(reload);
  const [renaming, setRenaming] = useState<{ readableId: string; name: string } | null>(null);
  // Collections made, renamed or deleted elsewhere (another tab, the API) show up without a reload.
  useEffect(() => api.subscribe(CollectionEventsDocument, {}, { next: reload, error: () => undefined, done: () => undefined }), [api, reload]);

  const create = (event: FormEvent) => {
    event.preventDefault();
    void act(async () => {
      await api.request(CreateCollectionDocument, { input: { name } });
      setName('');
    });
  };

  return (
    <>
      <h1>Collections</h1>
      <Section title="New collection">
        <form className="inline" onSubmit={create}>
          <label htmlFor="new-collection">Name</label>
          <input id="new-collection" required minLength={1} value={name} onChange={(e) => setName(e.target.value)} />
          <button type="submit">Create collection</button>
        </form>
      </Section>
      <ErrorNote error={actionError ?? error} />
      <Section
        title="All collections"
        actions={
          <label className="search-box">
            <span>Filter</span>
            <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="name or id" />
          </label>
        }
      >
        {data && data.collections.length === 0 && <p>No collections yet.</p>}
        {data && data.collections.length > 0 && (
          <table>
            <TableHead columns={['Name', 'Id', 'Status', 'Sources', 'Created', 'Actions']} />
            <tbody>
              {data.collections.map((collection) => (
                <tr key={collection.id}>
                  <td>
                    {renaming?.readableId === collection.readableId ? (
                      <form
                        className="inline"
                        onSubmit={(event) => {
                          event.preventDefault();
                          void act(async () => {
                            await api.request(RenameCollectionDocument, renaming);
                            setRenaming(null);
                          });
                        }}
                      >
                        <label className="visually-hidden" htmlFor={`rename-${collection.readableId}`}>
                          New name
                        </label>
                        <input id={`rename-${collection.readableId}`} autoFocus value={renaming.name} onChange={(e) => setRenaming({ ...renaming, name: e.target.value })} />
                        <button type="submit">Save</button>
                        <button type="button" onClick={() => setRenaming(null)}>
                          Cancel
                        </button>
                      </form>
                    ) : (
                      <a href={`#/collections/${encodeURIComponent(collection.readableId)}`}>{collection.name}</a>
                    )}
                  </td>
                  <td>
                    <code>{collection.readableId}</code>
                  </td>
                  <td>
                    <StatusBadge status={collection.status} />
                  </td>
                  <td>{collection.sourceConnectionSummaries.map((s) => s.name).join(', ') || '—'}</td>
                  <td>{formatDate(collection.createdAt)}</td>
                  <td className="actions">
                    <a href={`#/collections/${encodeURIComponent(collection.readableId)}/search`}>Search</a>
                    <button type="button" onClick={() => setRenaming({ readableId: collection.readableId, name: collection.name })}>
                      Rename
                    </button>
                    <ConfirmButton
                      label="Delete"
                      question={`Delete the collection "${collection.name}" with all its connections and data? This cannot be undone.`}
                      onConfirm={() => void act(() => api.request(DeleteCollectionDocument, { readableId: collection.readableId }))}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
    </>
  );
}
