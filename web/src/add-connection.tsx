import { useState, type FormEvent } from 'react';
import { CreateConnectionDocument, SourcesDocument, type FieldFieldsFragment } from './generated';
import { asApiError, ErrorNote, Section, useApi, useLoad } from './ui';
import type { ApiError, FieldIssue } from './api';

type Values = Record<string, string | boolean>;

/** The text of a form control as the JSON value its field schema asks for; undefined leaves the field out. */
function toValue(field: FieldFieldsFragment, raw: string | boolean | undefined): unknown {
  if (raw === undefined || raw === '') return undefined;
  if (field.type === 'boolean') return raw === true;
  const text = String(raw);
  if (field.type === 'integer' || field.type === 'number') return Number(text);
  if (field.type === 'array') {
    const items = text.split(/\n|,/).map((item) => item.trim()).filter(Boolean);
    return field.itemsType === 'integer' || field.itemsType === 'number' ? items.map(Number) : items;
  }
  if (field.type === 'object') {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text; // the service says what is wrong with it, at the field
    }
  }
  return text;
}

function collect(fields: FieldFieldsFragment[], values: Values): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const value = toValue(field, values[field.name]);
    if (value !== undefined) out[field.name] = value;
  }
  return out;
}

/** The issue the service reported for a field, matched by its place: [..., group, name]. */
const issueAt = (issues: FieldIssue[], group: string, name: string) =>
  issues.find((issue) => issue.loc.at(-1) === name && issue.loc.includes(group))?.msg ?? issues.find((issue) => issue.loc.at(-1) === name)?.msg;

function FieldControl({ field, group, values, setValues, issue }: { field: FieldFieldsFragment; group: string; values: Values; setValues(v: Values): void; issue?: string }) {
  const id = `${group}-${field.name}`;
  const value = values[field.name];
  const describedBy = [field.description ? `${id}-help` : '', issue ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = { id, 'aria-invalid': issue ? true : undefined, 'aria-describedby': describedBy, required: field.required && field.type !== 'boolean' };
  const set = (next: string | boolean) => setValues({ ...values, [field.name]: next });
  let control;
  if (field.type === 'boolean') control = <input type="checkbox" {...common} checked={value === true || (value === undefined && field.default === 'true')} onChange={(e) => set(e.target.checked)} />;
  else if (field.enumValues?.length)
    control = (
      <select {...common} value={String(value ?? field.default ?? '')} onChange={(e) => set(e.target.value)}>
        {!field.required && <option value="">(default)</option>}
        {field.enumValues.map((option) => (
          <option key={option}>{option}</option>
        ))}
      </select>
    );
  else if (field.type === 'array' || field.type === 'object')
    control = <textarea {...common} rows={2} placeholder={field.type === 'array' ? 'one per line' : 'JSON'} value={String(value ?? '')} onChange={(e) => set(e.target.value)} />;
  else
    control = (
      <input
        {...common}
        type={field.isSecret ? 'password' : field.type === 'integer' || field.type === 'number' ? 'number' : 'text'}
        placeholder={field.default ?? undefined}
        autoComplete="off"
        value={String(value ?? '')}
        onChange={(e) => set(e.target.value)}
      />
    );
  return (
    <div className={`field${issue ? ' invalid' : ''}`}>
      <label htmlFor={id}>
        {field.title}
        {field.required && <span aria-hidden="true"> *</span>}
      </label>
      {control}
      {field.description && (
        <small id={`${id}-help`} className="hint">
          {field.description}
        </small>
      )}
      {issue && (
        <small id={`${id}-error`} className="error" role="alert">
          {issue}
        </small>
      )}
    </div>
  );
}

/** Adds a connection with a form built from the catalog's field schemas; the service's 422 issues show at their fields. */
export function AddConnection({ readableId, onCreated }: { readableId: string; onCreated(): void }) {
  const api = useApi();
  const { data, error: loadError } = useLoad(() => api.request(SourcesDocument, {}), []);
  const [shortName, setShortName] = useState('');
  const [name, setName] = useState('');
  const [cron, setCron] = useState('');
  const [config, setConfig] = useState<Values>({});
  const [auth, setAuth] = useState<Values>({});
  const [error, setError] = useState<ApiError | null>(null);
  const source = data?.sources.find((s) => s.shortName === shortName);
  const authFields = source?.authFields?.fields ?? [];

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!source) return;
    try {
      await api.request(CreateConnectionDocument, {
        input: {
          shortName,
          readableCollectionId: readableId,
          name: name || null,
          config: collect(source.configFields.fields, config),
          authentication: authFields.length ? { credentials: collect(authFields, auth) } : null,
          schedule: cron ? { cron } : null,
        },
      });
      setError(null);
      setConfig({});
      setAuth({});
      setName('');
      onCreated();
    } catch (failure) {
      setError(asApiError(failure));
    }
  };

  return (
    <Section title="Add a connection">
      <ErrorNote error={loadError} />
      <form onSubmit={submit} aria-label="Add a connection">
        <div className="field">
          <label htmlFor="source">Source</label>
          <select id="source" required value={shortName} onChange={(e) => (setShortName(e.target.value), setConfig({}), setAuth({}), setError(null))}>
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
              <fieldset>
                <legend>Configuration</legend>
                {source.configFields.fields.map((field) => (
                  <FieldControl key={field.name} field={field} group="config" values={config} setValues={setConfig} issue={error ? issueAt(error.issues, 'config', field.name) : undefined} />
                ))}
              </fieldset>
            )}
            {authFields.length > 0 && (
              <fieldset>
                <legend>Credentials</legend>
                {authFields.map((field) => (
                  <FieldControl key={field.name} field={field} group="credentials" values={auth} setValues={setAuth} issue={error ? issueAt(error.issues, 'credentials', field.name) : undefined} />
                ))}
              </fieldset>
            )}
            <div className="field">
              <label htmlFor="cron">Schedule (cron, UTC; empty for none)</label>
              <input id="cron" value={cron} placeholder="0 * * * *" onChange={(e) => setCron(e.target.value)} aria-invalid={error && issueAt(error.issues, 'schedule', 'cron') ? true : undefined} />
            </div>
            <ErrorNote error={error} />
            <button type="submit">Connect and sync</button>
          </>
        )}
      </form>
    </Section>
  );
}
