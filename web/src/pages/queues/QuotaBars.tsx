// A ClusterQueue's quota as bars, one per flavor and resource: usage filled up to the nominal quota
// (a tick marks it), borrowed usage past it in another colour, and the room the borrowing limit
// leaves as the bar's remaining length.
import { formatAmount } from '../nodes/allocation';
import type { QuotaRow } from './view';

const pct = (v: number, of: number): number => (of > 0 ? Math.max(0, Math.min(1, v / of)) * 100 : 0);

export function QuotaBar({ row, cohort }: { row: QuotaRow; cohort: boolean }) {
  const { flavor, resource, nominal, borrowingLimit, used, borrowed } = row;
  // the bar spans what the queue may reach: without a cohort its nominal quota; in one, nominal plus
  // its borrowing limit or, with no limit, what it borrows now (at least a quarter more, so the
  // nominal tick stays visible)
  const span = cohort ? nominal + (borrowingLimit ?? Math.max(borrowed, nominal / 4)) : Math.max(nominal, used);
  const fmt = (v: number): string => formatAmount(resource, v);
  const own = used - borrowed;
  return (
    <div className="alloc-row quota-row" data-flavor={flavor} data-resource={resource}>
      <div className="alloc-name" title={`${flavor} · ${resource}`}>
        <span className="muted">{flavor}</span> {resource}
      </div>
      <div
        className={`alloc-bar quota-bar ${used > nominal ? 'borrowing' : ''}`}
        role="meter"
        aria-label={`${flavor} ${resource}: ${fmt(used)} used of ${fmt(nominal)} nominal`}
        aria-valuemin={0}
        aria-valuemax={nominal}
        aria-valuenow={used}
      >
        <div className="quota-own" style={{ width: `${pct(own, span)}%` }} />
        <div className="quota-borrowed" style={{ left: `${pct(own, span)}%`, width: `${pct(borrowed, span)}%` }} />
        <div className="quota-nominal" style={{ left: `${pct(nominal, span)}%` }} title={`nominal ${fmt(nominal)}`} />
      </div>
      <div className="alloc-text small quota-text">
        <b>{fmt(used)}</b> / {fmt(nominal)}
        {borrowed > 0 ? <span className="quota-borrowed-text"> · borrowed {fmt(borrowed)}</span> : null}
        {cohort ? <span className="muted"> · may borrow {borrowingLimit === undefined ? 'any' : fmt(borrowingLimit)}</span> : null}
      </div>
    </div>
  );
}

export function QuotaBars({ rows, cohort }: { rows: QuotaRow[]; cohort: boolean }) {
  if (!rows.length) return <div className="muted small">No quota: this queue admits nothing until it names flavors and resources.</div>;
  return (
    <div className="alloc quota">
      {rows.map((r) => (
        <QuotaBar key={`${r.flavor}/${r.resource}`} row={r} cohort={cohort} />
      ))}
    </div>
  );
}

export function QuotaLegend() {
  return (
    <div className="alloc-legend muted small" aria-hidden="true">
      <span>
        <i className="sw sw-req" /> used within nominal quota
      </span>
      <span>
        <i className="sw sw-borrow" /> borrowed from the cohort
      </span>
      <span>
        <i className="sw sw-use" /> nominal quota
      </span>
    </div>
  );
}
