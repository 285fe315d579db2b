import { useState, type FormEvent } from 'react';
import { CreateWebhookDocument, DeleteWebhookDocument, RecoverWebhookDocument, SetWebhookDisabledDocument, WebhookMessageDocument, WebhooksDocument } from './generated';
import { ConfirmButton, ErrorNote, formatDate, Section, StatusBadge, TableHead, useAction, useApi, useLoad } from './ui';

const EVENT_TYPES = ['sync.pending', 'sync.running', 'sync.completed', 'sync.failed', 'sync.cancelled', 'collection.created', 'collection.updated', 'collection.deleted', 'source_connection.created', 'source_connection.auth_completed', 'source_connection.deleted'];

function MessageDetail({ id }: { id: string }) {
  const api = useApi();
  const { data, error } = useLoad(() => api.request(WebhookMessageDocument, { id }), [id]);
  if (error) return <ErrorNote error={error} />;
  const message = data?.webhookMessage;
  if (!message) return <p>Loading…</p>;
  return (
    <div className="message-detail">
      <h3>Delivery attempts</h3>
      {message.deliveryAttempts?.length ? (
        <table>
          <TableHead columns={['#', 'When', 'Target', 'Status', 'HTTP', 'Duration']} />
          <tbody>
            {message.deliveryAttempts.map((attempt) => (
              <tr key={attempt.id}>
                <td>{attempt.attemptNumber}</td>
                <td>{formatDate(attempt.timestamp)}</td>
                <td>{attempt.url}</td>
                <td>
                  <StatusBadge status={attempt.status} />
                </td>
                <td>{attempt.responseStatusCode ?? '—'}</td>
                <td>{attempt.durationMs} ms</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>No attempts yet.</p>
      )}
      <h3>Payload</h3>
      <pre>{JSON.stringify(message.payload, null, 2)}</pre>
    </div>
  );
}

export function WebhooksPage({ canChange }: { canChange: boolean }) {
  const api = useApi();
  const { data, error, reload } = useLoad(() => api.request(WebhooksDocument, {}), []);
  const [url, setUrl] = useState('');
  const [eventTypes, setEventTypes] = useState<string[]>(['sync.completed']);
  const [opened, setOpened] = useState<string | null>(null);
  const { actionError, act } = useAction(reload);
  const create = (event: FormEvent) => {
    event.preventDefault();
    void act(() => api.request(CreateWebhookDocument, { input: { url, eventTypes } }));
  };
  const dayAgo = () => new Date(Date.now() - 24 * 3600 * 1000).toISOString();

  return (
    <>
      <h1>Webhooks</h1>
      {!canChange && (
        <p className="notice" role="note">
          Reading works with an API key; creating, pausing, resuming, recovering or deleting subscriptions needs a bearer token of an admin or owner. Sign out and sign in with one to
          change them.
        </p>
      )}
      <ErrorNote error={actionError ?? error} />
      <Section title="New subscription">
        <form onSubmit={create} aria-label="New webhook subscription">
          <div className="field">
            <label htmlFor="webhook-url">Endpoint URL</label>
            <input id="webhook-url" type="url" required value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/hooks" />
          </div>
          <fieldset className="checks">
            <legend>Event types</legend>
            {EVENT_TYPES.map((type) => (
              <label key={type}>
                <input type="checkbox" checked={eventTypes.includes(type)} onChange={(e) => setEventTypes(e.target.checked ? [...eventTypes, type] : eventTypes.filter((t) => t !== type))} /> {type}
              </label>
            ))}
          </fieldset>
          <button type="submit" disabled={!canChange}>
            Create subscription
          </button>
        </form>
      </Section>
      <Section title="Subscriptions">
        {data?.webhookSubscriptions.length === 0 && <p>No subscriptions.</p>}
        {data && data.webhookSubscriptions.length > 0 && (
          <table>
            <TableHead columns={['URL', 'Events', 'Health', 'State', 'Actions']} />
            <tbody>
              {data.webhookSubscriptions.map((subscription) => (
                <tr key={subscription.id}>
                  <td>{subscription.url}</td>
                  <td>{subscription.filterTypes.join(', ')}</td>
                  <td>
                    <StatusBadge status={subscription.healthStatus} />
                  </td>
                  <td>{subscription.disabled ? 'paused' : 'active'}</td>
                  <td className="actions">
                    <button type="button" disabled={!canChange} onClick={() => act(() => api.request(SetWebhookDisabledDocument, { id: subscription.id, disabled: !subscription.disabled }))}>
                      {subscription.disabled ? 'Resume' : 'Pause'}
                    </button>
                    <button type="button" disabled={!canChange} onClick={() => act(() => api.request(RecoverWebhookDocument, { subscriptionId: subscription.id, since: dayAgo() }))}>
                      Recover last 24 h
                    </button>
                    {canChange && (
                      <ConfirmButton label="Delete" question={`Delete the subscription to ${subscription.url}?`} onConfirm={() => void act(() => api.request(DeleteWebhookDocument, { id: subscription.id }))} />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      <Section title="Messages" actions={<button type="button" onClick={reload}>Refresh</button>}>
        {data?.webhookMessages.length === 0 && <p>No messages yet.</p>}
        <ul className="messages" aria-label="Webhook messages">
          {data?.webhookMessages.map((message) => (
            <li key={message.id}>
              <button type="button" aria-expanded={opened === message.id} onClick={() => setOpened(opened === message.id ? null : message.id)}>
                {message.eventType} · {formatDate(message.timestamp)}
              </button>
              {opened === message.id && <MessageDetail id={message.id} />}
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}
