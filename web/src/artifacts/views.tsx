// The renderers of the artifact registry (index.tsx). Each validates what it reads (model.ts) and
// shows a problem inside its own panel.
import { useEffect, useMemo, useState } from 'react';
import type { KeyboardEvent, MouseEvent } from 'react';
import type { ArtifactViewProps } from './index';
import type { ConfusionMatrix, RocCurve, RocPoint } from './model';
import { confusionMatrix, contentUrl, metadataRows, nearestPoint, rocCurve, scalarMetrics, textPreview } from './model';
import { htmlSrcdoc, markdownSrcdoc, type DocColors } from './srcdoc';
import { useContent } from './useContent';

/** the first KB of a file, for the text preview of datasets, models and other files */
export const PREVIEW_BYTES = 1024;
/** HTML and Markdown documents are shown up to this size; past it the panel says so */
export const DOCUMENT_BYTES = 512 * 1024;

function Problem({ children }: { children: string }) {
  return (
    <p className="artifact-error" role="alert">
      {children}
    </p>
  );
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(6)));
}

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

function Download({ p }: { p: ArtifactViewProps }) {
  return (
    <a className="small" href={contentUrl(p.run, p.task, p.output, p.index ?? 0)} download={p.artifact.name}>
      Download whole file
    </a>
  );
}

function Uri({ uri }: { uri: string }) {
  return (
    <div className="artifact-uri small">
      <span className="muted">URI </span>
      <code>{uri}</code>
    </div>
  );
}

export function MetricsView({ artifact }: ArtifactViewProps) {
  const { metrics, errors } = scalarMetrics(artifact.metadata);
  return (
    <div>
      {errors.map((e) => (
        <Problem key={e}>{e}</Problem>
      ))}
      {metrics.length === 0 && errors.length === 0 ? <p className="muted">No metrics were logged.</p> : null}
      {metrics.length ? (
        <table className="plain artifact-metrics">
          <thead>
            <tr>
              <th scope="col">Metric</th>
              <th scope="col" className="num">
                Value
              </th>
            </tr>
          </thead>
          <tbody>
            {metrics.map((m) => (
              <tr key={m.name}>
                <td>{m.name}</td>
                <td className="num">{fmt(m.value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

export function ClassificationView({ artifact, compact }: ArtifactViewProps) {
  const cm = confusionMatrix(artifact.metadata);
  const roc = rocCurve(artifact.metadata);
  if (!cm && !roc) return <p className="muted">Neither a confusion matrix nor a ROC curve was logged.</p>;
  return (
    <div className={`artifact-classification${compact ? ' compact' : ''}`}>
      {cm ? (
        <figure>
          <figcaption>Confusion matrix</figcaption>
          {cm.ok ? <MatrixGrid m={cm.value} /> : <Problem>{cm.error}</Problem>}
        </figure>
      ) : null}
      {roc ? (
        <figure>
          <figcaption>ROC curve</figcaption>
          {roc.ok ? <RocChart curve={roc.value} size={compact ? 220 : 320} /> : <Problem>{roc.error}</Problem>}
        </figure>
      ) : null}
    </div>
  );
}

function MatrixGrid({ m }: { m: ConfusionMatrix }) {
  return (
    <table className="confusion">
      <thead>
        <tr>
          <th className="corner small muted" scope="col">
            true ↓ predicted →
          </th>
          {m.labels.map((l) => (
            <th key={l} scope="col">
              {l}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {m.cells.map((row, i) => (
          <tr key={m.labels[i]}>
            <th scope="row">{m.labels[i]}</th>
            {row.map((c) => (
              <td
                key={c.col}
                className={c.heat > 0.55 ? 'hot' : undefined}
                style={{ background: `color-mix(in srgb, var(--accent) ${Math.round(c.heat * 90)}%, var(--panel))` }}
                title={`true ${m.labels[c.row]}, predicted ${m.labels[c.col]}: ${c.count} (${Math.round(c.ofRow * 100)}% of ${m.labels[c.row]})`}
              >
                {c.count}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const PAD = 30;

function RocChart({ curve, size }: { curve: RocCurve; size: number }) {
  const [hover, setHover] = useState<RocPoint | undefined>();
  const w = size - PAD - 8;
  const x = (v: number): number => PAD + v * w;
  const y = (v: number): number => 8 + (1 - v) * w;
  const path = curve.points.map((p, i) => `${i ? 'L' : 'M'}${x(p.fpr).toFixed(1)},${y(p.tpr).toFixed(1)}`).join(' ');
  const onMove = (e: MouseEvent<SVGSVGElement>): void => {
    const box = e.currentTarget.getBoundingClientRect();
    const fpr = ((e.clientX - box.left) * (size / box.width) - PAD) / w;
    setHover(nearestPoint(curve.points, Math.min(1, Math.max(0, fpr))));
  };
  const onKey = (e: KeyboardEvent<SVGSVGElement>): void => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    e.preventDefault();
    const i = hover ? curve.points.indexOf(hover) : -1;
    const next = e.key === 'ArrowRight' ? Math.min(curve.points.length - 1, i + 1) : Math.max(0, i < 0 ? 0 : i - 1);
    setHover(curve.points[next]);
  };
  return (
    <div className="roc">
      <svg
        width={size}
        height={size}
        viewBox={`0 0 ${size} ${size}`}
        role="img"
        aria-label={`ROC curve, area under the curve ${curve.auc.toFixed(3)}; arrow keys step through thresholds`}
        tabIndex={0}
        onMouseMove={onMove}
        onMouseLeave={() => setHover(undefined)}
        onKeyDown={onKey}
      >
        <rect x={PAD} y={8} width={w} height={w} className="roc-frame" />
        <line x1={x(0)} y1={y(0)} x2={x(1)} y2={y(1)} className="roc-diag" />
        {[0, 0.5, 1].map((t) => (
          <g key={t} className="roc-tick">
            <text x={x(t)} y={size - 10} textAnchor="middle">
              {t}
            </text>
            <text x={PAD - 4} y={y(t) + 4} textAnchor="end">
              {t}
            </text>
          </g>
        ))}
        <path d={path} className="roc-line" />
        {hover ? <circle cx={x(hover.fpr)} cy={y(hover.tpr)} r={4} className="roc-dot" /> : null}
      </svg>
      <div className="small muted roc-readout" aria-live="polite">
        {hover
          ? `threshold ${fmt(hover.threshold)} · TPR ${fmt(hover.tpr)} · FPR ${fmt(hover.fpr)}`
          : `AUC ${curve.auc.toFixed(3)} · x: false positive rate, y: true positive rate`}
      </div>
    </div>
  );
}

function readColors(): DocColors {
  const s = getComputedStyle(document.documentElement);
  const v = (n: string, d: string): string => s.getPropertyValue(n).trim() || d;
  return { text: v('--text', '#1b1f24'), background: v('--panel', '#ffffff'), border: v('--border', '#d9dde3'), link: v('--accent', '#2f6fde') };
}

const sameColors = (a: DocColors, b: DocColors): boolean => a.text === b.text && a.background === b.background && a.border === b.border && a.link === b.link;

/** the dashboard's colours for a document in an iframe, which cannot read its CSS variables; follows the theme toggle */
function useDocColors(): DocColors {
  const [colors, setColors] = useState(readColors);
  useEffect(() => {
    const update = (): void => setColors((old) => {
      const next = readColors();
      return sameColors(old, next) ? old : next;
    });
    const o = new MutationObserver(update);
    o.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    update();
    return () => o.disconnect();
  }, []);
  return colors;
}

function DocumentView({ p, markdown }: { p: ArtifactViewProps; markdown: boolean }) {
  const c = useContent(p.run, p.task, p.output, p.index ?? 0, DOCUMENT_BYTES);
  const colors = useDocColors();
  const doc = useMemo(() => {
    if (!c.bytes) return undefined;
    const text = new TextDecoder().decode(c.bytes);
    return markdown ? markdownSrcdoc(text, colors) : htmlSrcdoc(text);
  }, [c.bytes, markdown, colors]);
  if (c.loading) return <p className="muted">Loading…</p>;
  if (c.error) return <Problem>{c.error}</Problem>;
  const cut = c.size !== undefined && c.bytes !== undefined && c.size > c.bytes.length;
  return (
    <div>
      {cut ? (
        <p className="notice small">
          Showing the first {bytes(c.bytes?.length ?? 0)} of {bytes(c.size ?? 0)}. <Download p={p} />
        </p>
      ) : null}
      <iframe
        className={`artifact-doc${p.compact ? ' compact' : ''}`}
        title={`${p.artifact.name} (${markdown ? 'Markdown' : 'HTML'})`}
        sandbox=""
        srcDoc={doc}
        style={markdown ? { background: colors.background } : undefined}
      />
      <div className="artifact-foot">
        <Uri uri={p.artifact.uri} />
        {cut ? null : <Download p={p} />}
      </div>
      {markdown ? null : <p className="muted small artifact-note">Scripts in this report do not run here (it comes from a pipeline, not from Skiff); download it to open it whole.</p>}
    </div>
  );
}

export function HtmlView(p: ArtifactViewProps) {
  return <DocumentView p={p} markdown={false} />;
}

export function MarkdownView(p: ArtifactViewProps) {
  return <DocumentView p={p} markdown />;
}

export function GenericView(p: ArtifactViewProps) {
  const rows = metadataRows(p.artifact.metadata);
  return (
    <div className="stack">
      <Uri uri={p.artifact.uri} />
      {rows.length ? (
        <table className="plain artifact-meta">
          <tbody>
            {rows.map((r) => (
              <tr key={r.key}>
                <th scope="row">{r.key}</th>
                <td className="wrap">{r.value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted small">No metadata.</p>
      )}
      <FilePreview p={p} />
    </div>
  );
}

function FilePreview({ p }: { p: ArtifactViewProps }) {
  const c = useContent(p.run, p.task, p.output, p.index ?? 0, PREVIEW_BYTES);
  const preview = useMemo(() => (c.bytes ? textPreview(c.bytes, c.size ?? c.bytes.length) : undefined), [c.bytes, c.size]);
  if (c.loading) return <p className="muted small">Loading a preview…</p>;
  if (c.error) {
    if (/is a directory/.test(c.error)) return <p className="notice small">This artifact is a directory; there is no file to preview.</p>;
    return <Problem>{c.error}</Problem>;
  }
  if (!preview) return null;
  const size = c.size ?? 0;
  if (preview.kind === 'binary') {
    return (
      <p className="notice small">
        Binary content ({bytes(size)}), not shown as text. <Download p={p} />
      </p>
    );
  }
  return (
    <div>
      <div className="artifact-foot small">
        <span className="muted">{preview.truncated ? `The first ${bytes(c.bytes?.length ?? 0)} of ${bytes(size)}` : `${bytes(size)}`}</span>
        <Download p={p} />
      </div>
      {preview.text ? <pre className="artifact-preview">{preview.text}</pre> : <p className="muted small">The file is empty.</p>}
    </div>
  );
}
