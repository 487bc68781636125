// Tabs whose choice lives in the URL (?tab=), so a shared link opens the same tab.
import type { ReactNode } from 'react';
import { useQueryParam } from '../app/nav';

export interface Tab {
  id: string;
  label: ReactNode;
  render: () => ReactNode;
}

export function Tabs({ tabs, param = 'tab' }: { tabs: Tab[]; param?: string }) {
  const [current, setCurrent] = useQueryParam(param);
  const active = tabs.find((t) => t.id === current) ?? tabs[0];
  return (
    <div className="tabs">
      <div role="tablist" className="tablist">
        {tabs.map((t) => (
          <button key={t.id} type="button" role="tab" aria-selected={t === active} className={t === active ? 'active' : ''} onClick={() => setCurrent(t === tabs[0] ? undefined : t.id)}>
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" className="tabpanel">
        {active?.render()}
      </div>
    </div>
  );
}
