// One pipeline artifact full size: /ui/<ns>/artifact?run=&task=&output=&index=. The run page's task
// panel links here; the artifact is looked up in the run (or its RunTask records while it runs).
import { useList, useObject } from '../../api/context';
import type { Run, RunTask } from '../../api/types';
import { Link, useRoute } from '../../app/nav';
import { href, objectHref } from '../../app/router';
import { ArtifactView } from '../../artifacts';
import { schemaOf } from '../../artifacts/model';
import { RUN_LABEL, runArtifacts, taskRecordsByRun } from '../../artifacts/model';
import type { PageDef } from '../types';
import { RegisteredVersions } from './registered';

export function ArtifactPage({ namespace }: { namespace?: string }) {
  const { query } = useRoute();
  const run = query.get('run') ?? undefined;
  const task = query.get('task') ?? undefined;
  const output = query.get('output') ?? undefined;
  const indexText = query.get('index') ?? '0';
  const index = Number(indexText);
  const r = useObject<Run>('runs', namespace, run);
  const records = useList<RunTask>('runtasks', namespace, { labelSelector: run ? `${RUN_LABEL}=${run}` : undefined, enabled: run !== undefined });
  const missing = [!run && 'run', !task && 'task', !output && 'output'].filter(Boolean);
  let body;
  if (!namespace) body = <p className="notice bad">Choose a namespace: an artifact belongs to a run in one.</p>;
  else if (missing.length) body = <p className="notice bad">The link names no {missing.join(', ')}: expected ?run=…&amp;task=…&amp;output=…&amp;index=…</p>;
  else if (!Number.isInteger(index) || index < 0) body = <p className="notice bad">index={indexText} is not a position in the output’s list.</p>;
  else if (!r.loaded) body = <p className="muted">Loading…</p>;
  else if (r.error) body = <p className="notice bad">{r.error.message}</p>;
  else if (!r.object) body = <p className="notice bad">{r.deleted ? `Run ${run} was deleted.` : `There is no run ${run} in ${namespace}.`}</p>;
  else {
    const refs = runArtifacts(r.object, taskRecordsByRun(records.items)[run as string]);
    const ref = refs.find((x) => x.task === task && x.output === output && x.index === index);
    body = ref ? (
      <>
        <ArtifactView artifact={ref.artifact} namespace={namespace} run={run as string} task={ref.task} output={ref.output} index={ref.index} />
        {ref.artifact.uri ? <RegisteredVersions namespace={namespace} uri={ref.artifact.uri} model={schemaOf(ref.artifact) === 'system.Model'} /> : null}
      </>
    ) : (
      <p className="notice bad">
        Task {task} of run {run} has no output artifact {output}
        {index ? `[${index}]` : ''}
        {refs.length ? ` (it has ${[...new Set(refs.filter((x) => x.task === task).map((x) => x.output))].join(', ') || 'none on that task'})` : ''}.
      </p>
    );
  }
  return (
    <section className="page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to={href({ namespace, plural: 'runs' })}>Runs</Link>
        {run ? (
          <>
            <span>/</span>
            <Link to={objectHref('runs', namespace, run)}>{run}</Link>
          </>
        ) : null}
        {task ? <span>/ {task}</span> : null}
      </nav>
      <header className="listhead">
        <h1>
          Artifact {output ?? ''}
          {index ? `[${index}]` : ''}
        </h1>
      </header>
      {body}
    </section>
  );
}

export const pages: PageDef[] = [{ plural: 'artifact', title: 'Artifact', page: ArtifactPage }];
