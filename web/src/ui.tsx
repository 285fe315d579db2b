import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { ApiError, type Api } from './api';

export const ApiContext = createContext<Api | null>(null);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside a signed-in console');
  return api;
}

/** Loads with `load` now and whenever `reload` is called; keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | null; error: ApiError | null; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [round, setRound] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `deps` stand for what `load` reads; `round` asks again
  useEffect(() => {
    let current = true;
    load().then(
      (value) => current && (setData(value), setError(null)),
      (failure: unknown) => current && setError(asApiError(failure)),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  return { data, error, reload: useCallback(() => setRound((n) => n + 1), []) };
}

/**
 * Runs a change (create, rename, delete...) and then reloads, if asked; a failure is kept in `actionError` for
 * an ErrorNote until the next change succeeds.
 */
export function useAction(reload?: () => void): { actionError: ApiError | null; act: (action: () => Promise<unknown>) => Promise<void> } {
  const [actionError, setActionError] = useState<ApiError | null>(null);
  const act = async (action: () => Promise<unknown>) => {
    try {
      await action();
      setActionError(null);
      reload?.();
    } catch (failure) {
      setActionError(asApiError(failure));
    }
  };
  return { actionError, act };
}

export const asApiError = (failure: unknown) => (failure instanceof ApiError ? failure : new ApiError(String((failure as Error)?.message ?? failure), 'ERROR'));

export function ErrorNote({ error }: { error: ApiError | null }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error.message} {error.code !== 'ERROR' && <span className="code">({error.code})</span>}
    </p>
  );
}

export function formatDate(value: string | null | undefined): string {
  return value ? new Date(value).toLocaleString() : '—';
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status.toLowerCase()}`}>{status}</span>;
}

/** A button that asks before it does something that cannot be undone. */
export function ConfirmButton({ label, question, onConfirm }: { label: string; question: string; onConfirm: () => void }) {
  return (
    <button type="button" className="danger" onClick={() => window.confirm(question) && onConfirm()}>
      {label}
    </button>
  );
}

export function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="panel" aria-label={title}>
      <div className="panel-head">
        <h2>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/** A table's header row: one column header per name, scoped for screen readers. */
export function TableHead({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th key={column} scope="col">
            {column}
          </th>
        ))}
      </tr>
    </thead>
  );
}
