import type { Condition } from '../api/types';
import { Age } from './Age';
import { StatusBadge } from './Status';

export function Conditions({ conditions }: { conditions: Condition[] | undefined }) {
  if (!conditions?.length) return <p className="muted">No conditions reported.</p>;
  return (
    <table className="plain">
      <thead>
        <tr>
          <th>Type</th>
          <th>Status</th>
          <th>Reason</th>
          <th>Message</th>
          <th>Changed</th>
        </tr>
      </thead>
      <tbody>
        {conditions.map((c) => (
          <tr key={c.type}>
            <td>{c.type}</td>
            <td>
              <StatusBadge state={c.status} />
            </td>
            <td>{c.reason}</td>
            <td className="wrap">{c.message}</td>
            <td>
              <Age ts={c.lastTransitionTime} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
