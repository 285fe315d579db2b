import { useEffect, useRef, useState, type ReactNode } from 'react';
import {
  AuthorizeConnectionDocument,
  CancelSyncDocument,
  DeleteConnectionDocument,
  JobProgressDocument,
  RunSyncDocument,
  SyncJobsDocument,
  type ConnectionFieldsFragment,
  type JobFieldsFragment,
} from './generated';
import { goToSignIn, returnUrlFor } from './sign-in-return';
import { SkippedItems } from './skipped-items';
import { ConfirmButton, ErrorNote, formatDate, StatusBadge, TableHead, useAction, useApi, useLoad } from './ui';

const FINISHED = ['COMPLETED', 'FAILED', 'CANCELLED'];

/** A job's record, kept current by the syncJobProgress subscription while it runs. */
function useLiveJob(job: JobFieldsFragment | null, onFinished: () => void): JobFieldsFragment | null {
  const api = useApi();
  const [live, setLive] = useState(job);
  useEffect(() => setLive(job), [job]);
  const id = job && !FINISHED.includes(job.status) ? job.id : null;
  // The latest callback, without restarting the stream each render.
  const finished = useRef(onFinished);
  finished.current = onFinished;
  useEffect(() => {
    if (!id) return;
    return api.subscribe(
      JobProgressDocument,
      { jobId: id },
      {
        next: ({ syncJobProgress }) => setLive(syncJobProgress),
        error: () => undefined,
        done: () => finished.current(),
      },
    );
  }, [api, id]);
  return live;
}

/** "n of total" when the source said how many entities the run yields (deletions are not among them). */
function TotalProgress({ job, total }: { job: JobFieldsFragment; total: number }) {
  const read = job.entitiesInserted + job.entitiesUpdated + job.entitiesSkipped + job.entitiesFailed;
  // The total is an estimate: a run may yield a little more than it announced.
  const max = Math.max(total, read);
  return (
    <div className="wide">
      <dt>Progress</dt>
      <dd>
        <span data-testid="job-total">
          {read} of {total}
        </span>
        <div className="bar" role="progressbar" aria-label="Entities processed" aria-valuemin={0} aria-valuemax={max} aria-valuenow={read}>
          <div style={{ width: `${max > 0 ? (100 * read) / max : 100}%` }} />
        </div>
      </dd>
    </div>
  );
}

/** One figure of a run: a term and its value in the progress list. */
function Stat({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** A job's figures; "Skipped" counts the entities kept unchanged and the items left out, which are listed beneath. */
function JobProgress({ job }: { job: JobFieldsFragment }) {
  const processed = job.entitiesInserted + job.entitiesUpdated + job.entitiesDeleted + job.entitiesSkipped + job.entitiesFailed;
  const seconds = job.durationSeconds ?? (job.startedAt ? (Date.now() - Date.parse(job.startedAt)) / 1000 : 0);
  const rate = seconds > 0 ? processed / seconds : 0;
  return (
    <dl className="progress" aria-live="polite" aria-label="Sync progress">
      <div>
        <dt>Status</dt>
        <dd data-testid="job-status">
          <StatusBadge status={job.status} />
        </dd>
      </div>
      <Stat label="Found">{processed}</Stat>
      {job.entitiesTotal !== null && <TotalProgress job={job} total={job.entitiesTotal} />}
      <Stat label="Inserted">{job.entitiesInserted}</Stat>
      <Stat label="Updated">{job.entitiesUpdated}</Stat>
      <Stat label="Deleted">{job.entitiesDeleted}</Stat>
      <Stat label="Skipped">{job.entitiesSkipped}</Stat>
      <Stat label="Errors">{job.entitiesFailed}</Stat>
      <Stat label="Rate">{`${rate.toFixed(1)}/s`}</Stat>
      {job.error && (
        <div className="wide">
          <dt>Error</dt>
          <dd className="error">{job.error}</dd>
        </div>
      )}
    </dl>
  );
}

function JobHistory({ connectionId, round }: { connectionId: string; round: number }) {
  const api = useApi();
  const { data, error } = useLoad(() => api.request(SyncJobsDocument, { sourceConnectionId: connectionId }), [connectionId, round]);
  return (
    <details>
      <summary>Job history</summary>
      <ErrorNote error={error} />
      {data && (
        <table>
          <TableHead columns={['Started', 'Trigger', 'Status', 'Inserted / updated / deleted / skipped / failed', 'Duration']} />
          <tbody>
            {data.syncJobs.map((job) => (
              <tr key={job.id}>
                <td>{formatDate(job.startedAt ?? job.createdAt)}</td>
                <td>{job.trigger}</td>
                <td>
                  <StatusBadge status={job.status} />
                </td>
                <td>
                  {job.entitiesInserted} / {job.entitiesUpdated} / {job.entitiesDeleted} / {job.entitiesSkipped} / {job.entitiesFailed}
                </td>
                <td>{job.durationSeconds === null ? '—' : `${job.durationSeconds.toFixed(1)} s`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </details>
  );
}

/**
 * OAuth connections, which the service can send through a browser sign-in again (a pasted `oauth_token` too: its
 * own client or the operator's app signs it in, and it is a browser sign-in one afterwards).
 */
const OAUTH_SIGN_INS = ['oauth_browser', 'oauth_byoc', 'oauth_token'];

export function ConnectionCard({ connection, readableId, onChanged }: { connection: ConnectionFieldsFragment; readableId: string; onChanged: () => void }) {
  const api = useApi();
  const { actionError: error, act } = useAction();
  const [round, setRound] = useState(0);
  const [started, setStarted] = useState<JobFieldsFragment | null>(null);
  const lastJob = started ?? connection.sync.lastJob;
  const job = useLiveJob(lastJob, () => {
    setRound((n) => n + 1);
    onChanged();
  });
  const running = job !== null && !FINISHED.includes(job.status);
  // A fresh sign-in link (any earlier one stops working); the provider brings the browser back to this page.
  const signInAgain = () =>
    act(async () => {
      const { authorizeSourceConnection } = await api.request(AuthorizeConnectionDocument, { id: connection.id, redirectUrl: returnUrlFor(readableId) });
      goToSignIn(authorizeSourceConnection.auth.authUrl);
    });
  const needsSignIn = OAUTH_SIGN_INS.includes(connection.authMethod) && (connection.status === 'pending_auth' || connection.status === 'needs_reauth');
  return (
    <article className="connection" aria-label={`Connection ${connection.name}`}>
      <header>
        <h3>
          {connection.name} <span className="muted">({connection.shortName})</span>
        </h3>
        <StatusBadge status={connection.status} />
      </header>
      <p>
        {connection.entityCount} entities · runs {connection.sync.totalRuns} ({connection.sync.failedRuns} failed) · schedule{' '}
        {connection.schedule.continuous ? 'continuous' : connection.schedule.cron ? <code>{connection.schedule.cron}</code> : 'none'} · next run{' '}
        {formatDate(connection.schedule.nextRun)}
      </p>
      {connection.errorMessage && <p className="error">Last error: {connection.errorMessage}</p>}
      {needsSignIn && (
        <p className="notice">
          {connection.status === 'needs_reauth' ? 'The source no longer accepts this connection’s sign-in: sign in again to resume its syncs.' : 'This connection is waiting for its sign-in to finish.'}{' '}
          <button type="button" onClick={signInAgain}>
            Sign in again
          </button>
        </p>
      )}
      {job && <JobProgress job={job} />}
      {job && <SkippedItems key={job.id} jobId={job.id} finished={!running} />}
      <div className="actions">
        <button type="button" disabled={running} onClick={() => act(async () => setStarted((await api.request(RunSyncDocument, { sourceConnectionId: connection.id })).runSync))}>
          Run sync
        </button>
        <button
          type="button"
          disabled={!running}
          onClick={() => act(async () => setStarted((await api.request(CancelSyncDocument, { sourceConnectionId: connection.id, jobId: job!.id })).cancelSync))}
        >
          Cancel sync
        </button>
        <ConfirmButton
          label="Delete connection"
          question={`Delete the connection "${connection.name}" and its data? This cannot be undone.`}
          onConfirm={() => void act(async () => (await api.request(DeleteConnectionDocument, { id: connection.id }), onChanged()))}
        />
      </div>
      <ErrorNote error={error} />
      <JobHistory connectionId={connection.id} round={round} />
    </article>
  );
}
