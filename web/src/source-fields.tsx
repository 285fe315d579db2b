/** Form controls generated from the catalog's field schemas, and the values they collect. */
import type { ReactNode } from 'react';
import type { FieldFieldsFragment } from './generated';
import type { FieldIssue } from './api';

export type Values = Record<string, string | boolean>;

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

export function collect(fields: FieldFieldsFragment[], values: Values): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const value = toValue(field, values[field.name]);
    if (value !== undefined) out[field.name] = value;
  }
  return out;
}

/** The issue the service reported for a field, matched by its place: [..., group, name]. */
export const issueAt = (issues: FieldIssue[], group: string, name: string) =>
  issues.find((issue) => issue.loc.at(-1) === name && issue.loc.includes(group))?.msg ?? issues.find((issue) => issue.loc.at(-1) === name)?.msg;

export function FieldControl({ field, group, values, setValues, issue }: { field: FieldFieldsFragment; group: string; values: Values; setValues(v: Values): void; issue?: string }) {
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


/** A group of generated fields under its legend, each showing the service's issue at `group` (what comes before the fields: `children`). */
export function FieldSet({
  legend,
  fields,
  group,
  values,
  setValues,
  issues,
  children,
}: {
  legend: string;
  fields: FieldFieldsFragment[];
  group: string;
  values: Values;
  setValues(v: Values): void;
  issues: FieldIssue[] | undefined;
  children?: ReactNode;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {children}
      {fields.map((field) => (
        <FieldControl key={field.name} field={field} group={group} values={values} setValues={setValues} issue={issues ? issueAt(issues, group, field.name) : undefined} />
      ))}
    </fieldset>
  );
}
