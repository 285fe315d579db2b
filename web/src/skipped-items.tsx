import { useState } from 'react';
import { SkippedItemsDocument } from './generated';
import { ErrorNote, TableHead, useApi, useLoad } from './ui';

const PAGE = 20;

/**
 * What a job left out (unsupported or binary files, too large, unreadable, excluded…): counts by reason, and the
 * items the service lists (the first 1,000) page by page. Read again when the job finishes, since a running job's
 * list is still growing.
 */
export function SkippedItems({ jobId, finished }: { jobId: string; finished: boolean }) {
  const api = useApi();
  const [offset, setOffset] = useState(0);
  // The page is kept with the offset it was read at, as in the entities listing.
  const { data, error } = useLoad(() => api.request(SkippedItemsDocument, { jobId, limit: PAGE, offset }).then((page) => ({ ...page, offset })), [jobId, finished, offset]);
  const skipped = data?.syncJob?.skipped;
  const shownFrom = data?.offset ?? 0;
  if (error) return <ErrorNote error={error} />;
  if (!skipped || skipped.count === 0) return null;
  const reasons = skipped.byReason.map((entry) => `${entry.reason}: ${entry.count}`).join(', ');
  return (
    <details className="skipped" aria-label="Items left out">
      <summary>
        {skipped.count} {skipped.count === 1 ? 'item' : 'items'} left out ({reasons})
      </summary>
      <table>
        <TableHead columns={['Item', 'Reason', 'Detail']} />
        <tbody>
          {skipped.items.map((item) => (
            <tr key={`${item.reason}:${item.entityId}`}>
              <td>
                <code>{item.entityId}</code>
              </td>
              <td>{item.reason}</td>
              <td>{item.detail ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {skipped.listed > PAGE && (
        <div className="actions pager">
          <button type="button" disabled={shownFrom === 0} onClick={() => setOffset(Math.max(0, shownFrom - PAGE))}>
            Previous
          </button>
          <span>
            {shownFrom + 1}–{shownFrom + skipped.items.length} of {skipped.listed} listed
            {skipped.listed < skipped.count ? ` (the first ${skipped.listed} of ${skipped.count})` : ''}
          </span>
          <button type="button" disabled={shownFrom + PAGE >= skipped.listed} onClick={() => setOffset(shownFrom + PAGE)}>
            Next
          </button>
        </div>
      )}
    </details>
  );
}
