// "Import data" in a site's settings: another tool's history brought into the site. The steps are
// the API's: choose the tool and the files; each file's SHA-256 is worked out in the browser, the
// import created, the files sent in 8 MiB pieces with a bar each (a failed upload resumes where the
// server's copy ends); the server's dry run (validate) answers a manifest of what it would import;
// Start writes it, and the import's progress is followed until it completes or fails. Past imports
// are listed with what they added, and deleting one removes every row it added.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useRef, useState } from 'react';
import { useBusyAction } from '../busy.ts';
import { api, type Import, type Importer, type ImportManifest, problem, type Site } from '../api.ts';
import { formatDateRange } from '../dashboard/dates.ts';
import { formatBytes, formatNumber } from '../dashboard/format.ts';
import { matchPicked, pickProblems } from '../imports/pick.ts';
import { fileSha256 } from '../imports/sha256.ts';
import { importChunkSender, sendFile } from '../imports/upload.ts';
import { submitHandler } from '../forms.ts';
import { ListTable } from './ListTable.tsx';

/** How often an import being checked or written is read again. */
const POLL_MS = 1000;

const OPEN_STATES: readonly Import['state'][] = ['pending', 'validating', 'validated', 'running'];
const isOpen = (imp: Import) => OPEN_STATES.includes(imp.state);

const rangeText = (from: string | null, to: string | null) => (from && to ? formatDateRange({ from, to }) : '—');

/** What the page knows of an upload under way in this tab: the bytes the server holds of each file, and what stopped it. */
interface Upload {
  received: number[];
  busy: boolean;
  error: string | null;
}

export function Imports({ site }: { site: Site }) {
  const queries = useQueryClient();
  const base = `/api/sites/${encodeURIComponent(site.id)}`;
  const importers = useQuery({ queryKey: ['importers', site.id], queryFn: () => api<{ importers: Importer[] }>(`${base}/importers`).then((r) => r.importers) });
  const imports = useQuery({
    queryKey: ['imports', site.id],
    queryFn: () => api<{ imports: Import[] }>(`${base}/imports`).then((r) => r.imports),
    // Followed while the server checks or writes one; still otherwise.
    refetchInterval: (query) => (query.state.data?.some((imp) => imp.state === 'validating' || imp.state === 'running') ? POLL_MS : false),
  });
  // The files picked in this tab, by import: what an upload (or its retry) reads from.
  const [picked, setPicked] = useState<Record<string, File[]>>({});
  const [uploads, setUploads] = useState<Record<string, Upload>>({});
  const refresh = () => queries.invalidateQueries({ queryKey: ['imports', site.id] });
  const setUpload = (id: string, change: Partial<Upload>) => setUploads((all) => ({ ...all, [id]: { ...(all[id] ?? { received: [], busy: false, error: null }), ...change } }));

  /** Sends what the server lacks of each file (from its own count), then asks for the dry run. */
  const upload = async (imp: Import, files: File[]) => {
    const received = imp.files.map((f) => f.received);
    setUpload(imp.id, { received: [...received], busy: true, error: null });
    try {
      for (const file of imp.files) {
        if (file.complete) continue;
        await sendFile(files[file.index], file.received, importChunkSender(site.id, imp.id, file.index), (n) => {
          received[file.index] = n;
          setUpload(imp.id, { received: [...received] });
        });
      }
      await api<Import>(`${base}/imports/${imp.id}/validate`, { method: 'POST' });
      setUpload(imp.id, { busy: false });
    } catch (err) {
      setUpload(imp.id, { busy: false, error: problem(err) });
    }
    await refresh();
  };

  /** A retry reads the import again: the server's count of each file is where the upload goes on. */
  const resume = async (imp: Import, files: File[]) => {
    setUpload(imp.id, { busy: true, error: null });
    try {
      const fresh = await api<Import>(`${base}/imports/${imp.id}`);
      await upload(fresh, files);
    } catch (err) {
      setUpload(imp.id, { busy: false, error: problem(err) });
    }
  };

  const remove = async (imp: Import) => {
    await api(`${base}/imports/${imp.id}`, { method: 'DELETE' });
    // The dashboard's figures change with it.
    void queries.invalidateQueries({ queryKey: ['stats'] });
    await refresh();
  };

  const list = imports.data ?? [];
  const open = list.filter(isOpen);
  const done = list.filter((imp) => !isOpen(imp));
  const labelOf = (id: string) => importers.data?.find((i) => i.id === id)?.label ?? id;

  return (
    <div className="stack">
      <p>
        Bring this site’s history from another tool (or from a Plumb takeout). Plumb checks every file first and shows what it would import; nothing is written until you
        start the import, and deleting an import removes everything it added.
      </p>
      {importers.isError && <p className="error">{problem(importers.error)}</p>}
      {imports.isError && <p className="error">{problem(imports.error)}</p>}
      {open.map((imp) => (
        <OpenImport
          key={imp.id}
          imp={imp}
          label={labelOf(imp.source)}
          base={base}
          files={picked[imp.id]}
          upload={uploads[imp.id]}
          onPick={(files) => {
            setPicked((all) => ({ ...all, [imp.id]: files }));
            void resume(imp, files);
          }}
          onRetry={() => void resume(imp, picked[imp.id])}
          onStarted={refresh}
          onDiscard={() => remove(imp)}
        />
      ))}
      {importers.data && (
        <NewImport
          importers={importers.data}
          base={base}
          onCreated={(imp, files) => {
            setPicked((all) => ({ ...all, [imp.id]: files }));
            queries.setQueryData<Import[]>(['imports', site.id], (all) => [imp, ...(all ?? [])]);
            void upload(imp, files);
          }}
        />
      )}
      {done.length > 0 && <PastImports imports={done} labelOf={labelOf} onDelete={remove} />}
    </div>
  );
}

function NewImport({ importers, base, onCreated }: { importers: Importer[]; base: string; onCreated(imp: Import, files: File[]): void }) {
  const [source, setSource] = useState(importers[0]?.id);
  const [files, setFiles] = useState<File[]>([]);
  const [problems, setProblems] = useState<string[]>([]);
  const [preparing, setPreparing] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  const importer = importers.find((i) => i.id === source);
  if (importers.length === 0) return <p className="muted">This instance offers no importers.</p>;

  const submit = submitHandler(async () => {
    if (!importer) return;
    const found = pickProblems(files, importer);
    setProblems(found);
    setError(null);
    if (found.length > 0) {
      input.current?.focus();
      return;
    }
    try {
      const described = [];
      for (const file of files) {
        setPreparing(`Working out the checksum of ${file.name}…`);
        described.push({ name: file.name, size: file.size, sha256: await fileSha256(file, (n) => setPreparing(`Working out the checksum of ${file.name}… ${Math.floor((n / Math.max(1, file.size)) * 100)}%`)) });
      }
      setPreparing('Creating the import…');
      const imp = await api<Import>(`${base}/imports`, { method: 'POST', body: { source: importer.id, files: described } });
      setFiles([]);
      if (input.current) input.current.value = '';
      onCreated(imp, files);
    } catch (err) {
      setError(problem(err));
    } finally {
      setPreparing(null);
    }
  });

  return (
    <form className="stack import-form" onSubmit={submit} aria-label="New import" noValidate>
      <h3>New import</h3>
      <fieldset className="importers">
        <legend>Import from</legend>
        {importers.map((i) => (
          <label key={i.id} className="importer">
            <input type="radio" name={`${id}-source`} value={i.id} checked={source === i.id} onChange={() => setSource(i.id)} />
            <span className="importer-text">
              <strong>{i.label}</strong>
              <span>{i.description}</span>
              <span className="muted small">
                {i.extensions.join(', ')} · up to {i.max_files} {i.max_files === 1 ? 'file' : 'files'} of {formatBytes(i.max_file_bytes)} each
              </span>
            </span>
          </label>
        ))}
      </fieldset>
      <div className="field">
        <label className="field" htmlFor={`${id}-files`}>
          <span>Files</span>
          <input
            ref={input}
            id={`${id}-files`}
            type="file"
            multiple
            accept={importer?.extensions.join(',')}
            aria-invalid={problems.length > 0 ? true : undefined}
            aria-describedby={problems.length > 0 ? `${id}-problems` : undefined}
            onChange={(e) => {
              setFiles(Array.from(e.target.files ?? []));
              setProblems([]);
            }}
          />
        </label>
        {problems.length > 0 && (
          <ul className="field-error plain-list" id={`${id}-problems`}>
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        )}
      </div>
      {preparing && <p role="status">{preparing}</p>}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="button primary" disabled={preparing !== null}>
        Upload and check
      </button>
    </form>
  );
}

interface OpenImportProps {
  imp: Import;
  label: string;
  base: string;
  files: File[] | undefined;
  upload: Upload | undefined;
  onPick(files: File[]): void;
  onRetry(): void;
  onStarted(): Promise<unknown>;
  onDiscard(): Promise<void>;
}

const STEP: Record<Import['state'], string> = {
  pending: 'Uploading',
  validating: 'Checking the files',
  validated: 'Ready to import',
  running: 'Importing',
  completed: 'Completed',
  failed: 'Failed',
};

function OpenImport({ imp, label, base, files, upload, onPick, onRetry, onStarted, onDiscard }: OpenImportProps) {
  const { error, busy, run: act } = useBusyAction();
  const headingId = useId();
  const start = () => act(async () => {
    await api<Import>(`${base}/imports/${imp.id}/start`, { method: 'POST' });
    await onStarted();
  });
  const discard = () => {
    if (confirm(`Discard this import from ${label}? Its uploaded files are deleted and nothing is imported.`)) void act(onDiscard);
  };
  return (
    <section className="import-card stack" aria-labelledby={headingId} data-testid="open-import" data-state={imp.state}>
      <header className="import-head">
        <h3 id={headingId}>Import from {label}</h3>
        <span className="badge">{STEP[imp.state]}</span>
      </header>
      {imp.state === 'pending' && <Uploading imp={imp} files={files} upload={upload} onPick={onPick} onRetry={onRetry} />}
      {imp.state === 'validating' && (
        <p role="status" className="muted">
          Checking every row of the files; nothing is written yet…
        </p>
      )}
      {imp.state === 'validated' && imp.manifest && <Manifest manifest={imp.manifest} />}
      {imp.state === 'running' && <Running imp={imp} />}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="form-actions">
        {imp.state === 'validated' && (
          <button type="button" className="button primary" disabled={busy} onClick={() => void start()}>
            Start import
          </button>
        )}
        {imp.state !== 'running' && (
          <button type="button" className="button" disabled={busy || upload?.busy} onClick={discard}>
            Discard
          </button>
        )}
      </div>
    </section>
  );
}

function Uploading({ imp, files, upload, onPick, onRetry }: { imp: Import; files: File[] | undefined; upload: Upload | undefined; onPick(files: File[]): void; onRetry(): void }) {
  const [missing, setMissing] = useState<string[]>([]);
  const id = useId();
  const received = (index: number) => upload?.received[index] ?? imp.files[index].received;
  return (
    <div className="stack">
      <ul className="plain-list upload-list">
        {imp.files.map((file) => {
          const got = received(file.index);
          const whole = file.complete || got >= file.size;
          return (
            <li key={file.index} className="upload-file">
              <span className="upload-name">{file.name}</span>
              <progress value={got} max={Math.max(1, file.size)} aria-label={`Upload of ${file.name}`} />
              <span className="muted small upload-figures">{whole ? `${formatBytes(file.size)}, uploaded` : `${formatBytes(got)} of ${formatBytes(file.size)}`}</span>
            </li>
          );
        })}
      </ul>
      {upload?.busy && (
        <p role="status" className="muted small">
          Uploading… keep this page open until the files are checked.
        </p>
      )}
      {upload?.error && (
        <div className="stack tight">
          <p className="error" role="alert">
            The upload stopped: {upload.error}
          </p>
          {files && (
            <button type="button" className="button" onClick={onRetry}>
              Retry upload
            </button>
          )}
        </div>
      )}
      {!files && !upload?.busy && (
        // The page was left during the upload: the files must be chosen again to go on.
        <div className="field">
          <label className="field" htmlFor={`${id}-again`}>
            <span>Choose the same files again to resume the upload</span>
            <input
              id={`${id}-again`}
              type="file"
              multiple
              aria-invalid={missing.length > 0 ? true : undefined}
              aria-describedby={missing.length > 0 ? `${id}-missing` : undefined}
              onChange={(e) => {
                const match = matchPicked(imp.files, Array.from(e.target.files ?? []));
                if ('missing' in match) setMissing(match.missing);
                else {
                  setMissing([]);
                  onPick(match.files);
                }
              }}
            />
          </label>
          {missing.length > 0 && (
            <span className="field-error" id={`${id}-missing`}>
              Not among the chosen files (same name and size): {missing.join(', ')}
            </span>
          )}
        </div>
      )}
    </div>
  );
}

function Manifest({ manifest }: { manifest: ImportManifest }) {
  return (
    <div className="stack" data-testid="import-manifest">
      <p>
        <strong>{formatNumber(manifest.rows_accepted)}</strong> {manifest.rows_accepted === 1 ? 'row' : 'rows'} to import, {rangeText(manifest.from, manifest.to)}
        {manifest.rows_skipped > 0 && (
          <>
            ; <strong>{formatNumber(manifest.rows_skipped)}</strong> left out
          </>
        )}
        .
      </p>
      <ListTable columns={['Dataset', 'Files', 'Accepted', 'Skipped', 'Dates']} numeric={['Accepted', 'Skipped']} label="What the files hold" testId="import-datasets">
        {manifest.datasets.map((d) => (
          <tr key={d.name}>
            <th scope="row">{d.name}</th>
            <td>{d.files.join(', ')}</td>
            <td className="num">{formatNumber(d.rows_accepted)}</td>
            <td className="num">{formatNumber(d.rows_skipped)}</td>
            <td className="nowrap">{rangeText(d.from, d.to)}</td>
          </tr>
        ))}
      </ListTable>
      {manifest.skipped.length > 0 && (
        <div className="stack tight" data-testid="import-skipped">
          <h4>Rows left out</h4>
          <ul className="plain-list">
            {manifest.skipped.map((s) => (
              <li key={s.reason}>
                <span>
                  {s.reason}: <strong>{formatNumber(s.count)}</strong>
                </span>
                {s.examples.length > 0 && (
                  <ul className="examples muted small">
                    {s.examples.map((e) => (
                      <li key={`${e.file}:${e.line}`}>
                        {e.file}, line {e.line}: {e.message}
                      </li>
                    ))}
                  </ul>
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
      {manifest.overlap.days > 0 && (
        <p className="notice" data-testid="import-overlap">
          {manifest.overlap.days} {manifest.overlap.days === 1 ? 'day' : 'days'} of this range already {manifest.overlap.days === 1 ? 'has' : 'have'} data collected by Plumb (
          {rangeText(manifest.overlap.from, manifest.overlap.to)}). On those days the dashboard keeps showing Plumb’s own figures.
        </p>
      )}
      {manifest.warnings.length > 0 && (
        <ul className="plain-list warnings" data-testid="import-warnings">
          {manifest.warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Running({ imp }: { imp: Import }) {
  const read = imp.progress?.rows_read ?? 0;
  const total = imp.progress?.rows_total ?? null;
  return (
    <div className="stack tight">
      {total === null ? <progress aria-label="Import progress" /> : <progress value={read} max={Math.max(1, total)} aria-label="Import progress" />}
      <p role="status" className="muted small">
        {formatNumber(read)} {total === null ? '' : `of ${formatNumber(total)} `}rows written
      </p>
    </div>
  );
}

function PastImports({ imports, labelOf, onDelete }: { imports: Import[]; labelOf(id: string): string; onDelete(imp: Import): Promise<void> }) {
  const [error, setError] = useState<string | null>(null);
  const moment = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  const remove = (imp: Import) => {
    const range = imp.manifest ? ` (${rangeText(imp.manifest.from, imp.manifest.to)})` : '';
    if (!confirm(`Delete this import from ${labelOf(imp.source)}? Every figure it added${range} is removed from the site’s statistics. This cannot be undone.`)) return;
    setError(null);
    onDelete(imp).catch((err: unknown) => setError(problem(err)));
  };
  return (
    <div className="stack">
      <h3>Past imports</h3>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <ListTable columns={['Started', 'Source', 'State', 'Dates', 'Rows', 'Problem']} numeric={['Rows']} actions label="Past imports" testId="past-imports">
        {imports.map((imp) => (
          <tr key={imp.id} data-state={imp.state}>
            <td className="nowrap">{moment.format(new Date(imp.created_at))}</td>
            <td className="nowrap">{labelOf(imp.source)}</td>
            <td>
              <span className={`badge ${imp.state}`}>{imp.state}</span>
            </td>
            <td className="nowrap">{imp.manifest ? rangeText(imp.manifest.from, imp.manifest.to) : '—'}</td>
            <td className="num">{imp.state === 'completed' && imp.manifest ? formatNumber(imp.manifest.rows_accepted) : '—'}</td>
            <td className="import-problem">{imp.error ? errorText(imp.error) : '—'}</td>
            <td className="actions">
              <button type="button" className="button small danger" onClick={() => remove(imp)}>
                Delete
              </button>
            </td>
          </tr>
        ))}
      </ListTable>
    </div>
  );
}

/** Where an import failed and why: "export.csv, line 12: …" (said once, when the message already starts with it). */
function errorText(error: NonNullable<Import['error']>): string {
  const where = [error.file, error.line === null ? null : `line ${error.line}`].filter(Boolean).join(', ');
  return where && !error.message.startsWith(where) ? `${where}: ${error.message}` : error.message;
}
