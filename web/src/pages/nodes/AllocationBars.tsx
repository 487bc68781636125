// A node's allocation as bars: requests filled, limits as a lighter extension, actual use as a tick.
import type { ResourceRow } from './allocation';
import { formatAmount, formatPercent } from './allocation';

function tone(f: number | undefined): string {
  if (f === undefined) return '';
  if (f > 1) return 'over';
  if (f >= 0.85) return 'high';
  return '';
}

const clamp = (f: number | undefined): number => Math.max(0, Math.min(1, f ?? 0)) * 100;

export function AllocationBar({ row }: { row: ResourceRow }) {
  const { resource, allocatable, requests, limits, usage } = row;
  const usageFraction = usage !== undefined && allocatable ? usage / allocatable : undefined;
  const label = `${resource}: ${formatAmount(resource, requests)} of ${formatAmount(resource, allocatable)} requested`;
  return (
    <div className="alloc-row" data-resource={resource}>
      <div className="alloc-name" title={resource}>
        {resource}
      </div>
      {allocatable === undefined ? (
        <div className="alloc-none muted small">{requests ? `${formatAmount(resource, requests)} requested, none offered by this node` : 'none on this node'}</div>
      ) : (
        <div
          className={`alloc-bar ${tone(row.requestsFraction)}`}
          role="meter"
          aria-label={label}
          aria-valuemin={0}
          aria-valuemax={allocatable}
          aria-valuenow={requests}
          aria-valuetext={`${formatPercent(row.requestsFraction)} requested`}
        >
          <div className="alloc-limits" style={{ width: `${clamp(row.limitsFraction)}%` }} />
          <div className="alloc-requests" style={{ width: `${clamp(row.requestsFraction)}%` }} />
          {usageFraction !== undefined ? <div className="alloc-usage" style={{ left: `${clamp(usageFraction)}%` }} title={`in use: ${formatAmount(resource, usage)}`} /> : null}
        </div>
      )}
      <div className="alloc-text small">
        {allocatable === undefined ? null : (
          <>
            <b>{formatAmount(resource, requests)}</b> / {formatAmount(resource, allocatable)} <span className="muted">({formatPercent(row.requestsFraction)})</span>
            {resource !== 'pods' ? <span className="muted"> · limits {formatAmount(resource, limits)}</span> : null}
            {usage !== undefined ? <span className="muted"> · in use {formatAmount(resource, usage)}</span> : null}
          </>
        )}
      </div>
    </div>
  );
}

export function AllocationBars({ rows }: { rows: ResourceRow[] }) {
  return (
    <div className="alloc">
      {rows.map((r) => (
        <AllocationBar key={r.resource} row={r} />
      ))}
    </div>
  );
}

export function AllocationLegend({ withUsage }: { withUsage: boolean }) {
  return (
    <div className="alloc-legend muted small" aria-hidden="true">
      <span>
        <i className="sw sw-req" /> requests
      </span>
      <span>
        <i className="sw sw-lim" /> limits
      </span>
      {withUsage ? (
        <span>
          <i className="sw sw-use" /> in use (metrics API, when the page opened)
        </span>
      ) : null}
    </div>
  );
}
