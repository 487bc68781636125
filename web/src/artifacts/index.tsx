// A pipeline artifact, rendered by its type: system.Metrics as a table, system.ClassificationMetrics as
// a confusion matrix and a ROC curve, system.HTML and system.Markdown in a sandboxed frame (no script
// from an artifact runs), anything else as its metadata with a preview of its first bytes. The run
// page's task panel and the compare page show artifacts only through this component.
import { marked } from 'marked';
import { useEffect, useState } from 'react';
import { useApi } from '../api/context';
import { messageOf } from '../api/errors';
import type { RunArtifact } from '../api/types';
import type { Matrix, RocPoint } from './model';
import { auc, confusionMatrix, looksLikeText, rocCurve, scalars } from './model';
import './artifacts.css';

export interface ArtifactViewProps {
  artifact: RunArtifact;
  namespace: string;
  /** the run (its KFP id is its name) and the task path whose output or input this is */
  run: string;
  task: string;
  /** the output (or input) name on the task, for the read-back endpoint */
  output: string;
  /** its index in that output's list */
  index?: number;
  /** smaller rendering for side-by-side comparison */
  compact?: boolean;
}

const PREVIEW_BYTES = 64 * 1024;

export function readPath(p: Pick<ArtifactViewProps, 'run' | 'task' | 'output' | 'index'>): string {
  return `/apis/v2beta1/runs/${encodeURIComponent(p.run)}/nodes/${encodeURIComponent(p.task)}/artifacts/${encodeURIComponent(p.output)}:read?index=${p.index ?? 0}`;
}

export function schemaOf(a: RunArtifact): string {
  return String(a.type?.schemaTitle ?? 'system.Artifact');
}

export function ArtifactView(props: ArtifactViewProps) {
  const { artifact } = props;
  const schema = schemaOf(artifact);
  return (
    <div className={`card artifact ${props.compact ? 'compact' : ''}`} data-schema={schema}>
      <div className="art-head">
        <b>{props.output}</b>
        <span className="chip">{schema}</span>
        <a className="small" href={readPath(props)} target="_blank" rel="noreferrer">
          Open raw
        </a>
      </div>
      <Body {...props} schema={schema} />
    </div>
  );
}

function Body(props: ArtifactViewProps & { schema: string }) {
  const md = props.artifact.metadata;
  switch (props.schema) {
    case 'system.Metrics':
      return <MetricsTable metadata={md} />;
    case 'system.ClassificationMetrics':
      return <Classification metadata={md} compact={props.compact} />;
    case 'system.HTML':
      return <Framed {...props} kind="html" />;
    case 'system.Markdown':
      return <Framed {...props} kind="markdown" />;
    default:
      return <Generic {...props} />;
  }
}

function Problem({ text }: { text: string }) {
  return (
    <div className="notice bad" role="status">
      This artifact cannot be shown: {text}
    </div>
  );
}

export function MetricsTable({ metadata }: { metadata: Record<string, unknown> | undefined }) {
  const r = scalars(metadata);
  if (!r.ok) return <Problem text={r.error} />;
  if (!r.value.length) return <p className="muted">No metrics logged.</p>;
  return (
    <table className="plain metrics">
      <tbody>
        {r.value.map((m) => (
          <tr key={m.name}>
            <td>{m.name}</td>
            <td className="num">{typeof m.value === 'number' ? fmt(m.value) : m.value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : Math.abs(v) >= 1e-3 && Math.abs(v) < 1e6 ? v.toFixed(4).replace(/0+$/, '').replace(/\.$/, '') : v.toExponential(3);
}

function Classification({ metadata, compact }: { metadata: Record<string, unknown> | undefined; compact?: boolean }) {
  const cm = confusionMatrix(metadata);
  const roc = rocCurve(metadata);
  if (!cm && !roc) return <Generic metadataOnly metadata={metadata} />;
  return (
    <div className="classif">
      {cm ? cm.ok ? <ConfusionMatrix m={cm.value} compact={compact} /> : <Problem text={cm.error} /> : null}
      {roc ? roc.ok ? <Roc points={roc.value} compact={compact} /> : <Problem text={roc.error} /> : null}
    </div>
  );
}

export function ConfusionMatrix({ m, compact }: { m: Matrix; compact?: boolean }) {
  return (
    <figure className="cm" aria-label="Confusion matrix">
      <table>
        <thead>
          <tr>
            <th className="corner">true ↓ / predicted →</th>
            {m.labels.map((l) => (
              <th key={l} title={l}>
                {compact && l.length > 8 ? `${l.slice(0, 7)}…` : l}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {m.rows.map((row, i) => (
            <tr key={i}>
              <th title={m.labels[i]}>{m.labels[i]}</th>
              {row.map((c, j) => {
                const t = m.max ? c / m.max : 0;
                return (
                  <td key={j} style={{ background: `color-mix(in srgb, var(--accent) ${Math.round(t * 85)}%, transparent)`, color: t > 0.55 ? 'white' : undefined }} title={`true ${m.labels[i]}, predicted ${m.labels[j]}: ${c}`}>
                    {c}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      <figcaption className="muted small">Confusion matrix</figcaption>
    </figure>
  );
}

export function Roc({ points, compact }: { points: RocPoint[]; compact?: boolean }) {
  const [hover, setHover] = useState<RocPoint>();
  const size = compact ? 180 : 240;
  const pad = 28;
  const x = (f: number): number => pad + f * (size - pad - 8);
  const y = (t: number): number => size - pad - t * (size - pad - 8);
  const path = ['M', x(0), y(0), ...points.flatMap((p) => ['L', x(p.fpr), y(p.tpr)]), 'L', x(1), y(1)].join(' ');
  return (
    <figure className="roc" aria-label="ROC curve">
      <svg width={size} height={size} role="img" aria-label={`ROC curve, area ${auc(points).toFixed(3)}`}
        onMouseLeave={() => setHover(undefined)}
        onMouseMove={(e) => {
          const r = e.currentTarget.getBoundingClientRect();
          const f = (e.clientX - r.left - pad) / (size - pad - 8);
          let best: RocPoint | undefined;
          for (const p of points) if (!best || Math.abs(p.fpr - f) < Math.abs(best.fpr - f)) best = p;
          setHover(best);
        }}>
        <rect x={x(0)} y={y(1)} width={x(1) - x(0)} height={y(0) - y(1)} className="roc-frame" />
        <line x1={x(0)} y1={y(0)} x2={x(1)} y2={y(1)} className="roc-diag" />
        <path d={path} className="roc-line" />
        {hover ? <circle cx={x(hover.fpr)} cy={y(hover.tpr)} r={4} className="roc-dot" /> : null}
        <text x={x(0.5)} y={size - 6} className="roc-axis" textAnchor="middle">false positive rate</text>
        <text x={10} y={y(0.5)} className="roc-axis" textAnchor="middle" transform={`rotate(-90 10 ${y(0.5)})`}>true positive rate</text>
      </svg>
      <figcaption className="muted small">
        ROC · AUC {auc(points).toFixed(3)}
        {hover ? ` · threshold ${fmt(hover.threshold)}: TPR ${fmt(hover.tpr)}, FPR ${fmt(hover.fpr)}` : ''}
      </figcaption>
    </figure>
  );
}

/** reads the first bytes of an artifact's content through the KFP API */
function usePreview(p: ArtifactViewProps, enabled: boolean) {
  const { api } = useApi();
  const [state, setState] = useState<{ bytes?: Uint8Array; size?: number; error?: string }>({});
  const path = `${readPath(p)}&limit=${PREVIEW_BYTES}`;
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    fetch(path).then(async (res) => {
      if (!res.ok) throw new Error((await res.json().catch(() => ({}))).error_message ?? `${res.status} ${res.statusText}`);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const size = Number(res.headers.get('x-artifact-size') ?? bytes.length);
      if (live) setState({ bytes, size });
    }).catch((e) => live && setState({ error: messageOf(e) }));
    return () => {
      live = false;
    };
  }, [api, path, enabled]);
  return state;
}

function Truncated({ shown, size, href }: { shown: number; size?: number; href: string }) {
  if (size === undefined || size <= shown) return null;
  return (
    <div className="muted small">
      Showing the first {Math.round(shown / 1024)} KiB of {size > 1048576 ? `${(size / 1048576).toFixed(1)} MiB` : `${Math.round(size / 1024)} KiB`}.{' '}
      <a href={href} target="_blank" rel="noreferrer">
        Download the whole file
      </a>
    </div>
  );
}

function Framed(p: ArtifactViewProps & { kind: 'html' | 'markdown' }) {
  const { bytes, size, error } = usePreview(p, true);
  if (error) return <Problem text={error} />;
  if (!bytes) return <p className="muted">Loading…</p>;
  const text = new TextDecoder().decode(bytes);
  const html = p.kind === 'markdown' ? `<style>body{font:14px system-ui,sans-serif;margin:8px;color:#1b1f24}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}</style>${marked.parse(text, { async: false })}` : text;
  return (
    <>
      {/* sandbox without allow-scripts or allow-same-origin: the artifact's scripts never run */}
      <iframe className="art-frame" sandbox="" srcDoc={html} title={`${p.output} (${p.kind})`} style={{ height: p.compact ? 220 : 360 }} />
      <Truncated shown={bytes.length} size={size} href={readPath(p)} />
    </>
  );
}

function Generic(p: (ArtifactViewProps & { metadataOnly?: false }) | { metadataOnly: true; metadata: Record<string, unknown> | undefined }) {
  const metadata = p.metadataOnly ? p.metadata : p.artifact.metadata;
  const entries = Object.entries(metadata ?? {});
  return (
    <div className="stack">
      {!p.metadataOnly ? (
        <div className="muted small art-uri" title={p.artifact.uri}>
          {p.artifact.uri}
        </div>
      ) : null}
      {entries.length ? (
        <table className="plain">
          <tbody>
            {entries.map(([k, v]) => (
              <tr key={k}>
                <td>{k}</td>
                <td>
                  <code>{typeof v === 'string' ? v : JSON.stringify(v)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {!p.metadataOnly ? <TextPreview {...p} /> : null}
    </div>
  );
}

function TextPreview(p: ArtifactViewProps) {
  const [open, setOpen] = useState(!p.compact);
  const { bytes, size, error } = usePreview(p, open);
  if (!open) return <button type="button" onClick={() => setOpen(true)}>Preview</button>;
  if (error) return <div className="muted small">No preview: {error}</div>;
  if (!bytes) return <p className="muted">Loading…</p>;
  if (!looksLikeText(bytes.subarray(0, 4096))) return <div className="muted small">Binary content ({size} bytes): no text preview.</div>;
  const text = new TextDecoder().decode(bytes.subarray(0, 4096));
  return (
    <>
      <pre className="art-text">{text || '(empty)'}</pre>
      <Truncated shown={Math.min(bytes.length, 4096)} size={size} href={readPath(p)} />
    </>
  );
}
