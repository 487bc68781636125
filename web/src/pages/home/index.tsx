// The landing page: what is running in the namespace, what needs attention.
import { useList } from '../../api/context';
import type { KObject } from '../../api/types';
import { Events } from '../../components/Events';
import { summaryState, toneOf } from '../../components/Status';
import { Link } from '../../app/nav';
import { href } from '../../app/router';
import type { PageDef } from '../types';

const CARDS: { plural: string; title: string }[] = [
  { plural: 'runs', title: 'Pipeline runs' },
  { plural: 'jobs', title: 'Jobs' },
  { plural: 'pytorchjobs', title: 'PyTorchJobs' },
  { plural: 'tfjobs', title: 'TFJobs' },
  { plural: 'mpijobs', title: 'MPIJobs' },
  { plural: 'inferenceservices', title: 'InferenceServices' },
  { plural: 'pods', title: 'Pods' },
];

function Card({ plural, title, namespace }: { plural: string; title: string; namespace?: string }) {
  const list = useList<KObject>(plural, namespace);
  const counts = { ok: 0, run: 0, bad: 0, other: 0 };
  for (const o of list.items) {
    const t = toneOf(summaryState(o));
    if (t === 'ok') counts.ok++;
    else if (t === 'run' || t === 'wait') counts.run++;
    else if (t === 'bad') counts.bad++;
    else counts.other++;
  }
  return (
    <Link className="card statcard" to={href({ namespace, plural })}>
      <h3>{title}</h3>
      <div className="big">{list.loaded ? list.items.length : '…'}</div>
      <div className="muted small">
        {[
          counts.run ? <span key="run" className="tone-run-text">{counts.run} active</span> : null,
          counts.ok ? <span key="ok">{counts.ok} done</span> : null,
          counts.bad ? <span key="bad" className="tone-bad-text">{counts.bad} failed</span> : null,
        ]
          .filter(Boolean)
          .flatMap((x, i) => (i ? [' · ', x] : [x]))}
      </div>
    </Link>
  );
}

export function Home({ namespace }: { namespace?: string }) {
  return (
    <section className="page">
      <header className="listhead">
        <h1>{namespace ? `Namespace ${namespace}` : 'All namespaces'}</h1>
      </header>
      <div className="cards">
        {CARDS.map((c) => (
          <Card key={c.plural} {...c} namespace={namespace} />
        ))}
      </div>
      <h2>Recent events</h2>
      <Events namespace={namespace} height={360} />
    </section>
  );
}

export const pages: PageDef[] = [{ plural: 'overview', title: 'Overview', section: 'Workloads', order: 0, page: Home }];
