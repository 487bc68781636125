// Start a run (or a recurring run) of a pipeline version: a field per input definition, checked as it
// is typed; the server's refusal lands on the parameter it names.
import { useMemo, useState } from 'react';
import { useApi, useList } from '../../api/context';
import { ApiError, messageOf } from '../../api/errors';
import { KfpLabels } from '../../api/types';
import type { KObject, PipelineSpec } from '../../api/types';
import { useNav } from '../../app/nav';
import { objectHref, href } from '../../app/router';
import { createRecurringRun, createRun, createUncachedRun, defaultExperimentId } from './kfp';
import { collect, fieldsOf, parseField, placeServerError } from './runform';

interface Version extends KObject {
  spec: { pipelineName: string; pipelineSpec: PipelineSpec; platformSpec?: Record<string, unknown>; displayName?: string; name?: string };
}

export function RunForm({ version, namespace, pipelineLabel }: { version: Version; namespace: string; pipelineLabel: string }) {
  const { api, kinds } = useApi();
  const { navigate } = useNav();
  const fields = useMemo(() => fieldsOf(version.spec.pipelineSpec), [version]);
  const [texts, setTexts] = useState<Record<string, string>>({});
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string>();
  const [runName, setRunName] = useState(`${pipelineLabel} ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`);
  const [experiment, setExperiment] = useState('');
  const [recurring, setRecurring] = useState(false);
  const [cron, setCron] = useState('');
  const [interval, setInterval] = useState('3600');
  const [maxConcurrency, setMaxConcurrency] = useState('1');
  const [busy, setBusy] = useState(false);
  const [caching, setCaching] = useState(true);
  const [enabled, setEnabled] = useState(true);
  const experiments = useList<KObject & { spec?: { displayName?: string } }>('experiments', namespace);

  const errorOf = (name: string): string | undefined => {
    if (serverErrors[name]) return serverErrors[name];
    if (!touched[name]) return undefined;
    const f = fields.find((x) => x.name === name)!;
    const p = parseField(f, texts[name] ?? f.initial);
    return 'error' in p ? p.error : undefined;
  };

  async function submit(): Promise<void> {
    setTouched(Object.fromEntries(fields.map((f) => [f.name, true])));
    setServerErrors({});
    setFormError(undefined);
    const { parameters, errors } = collect(fields, texts);
    if (Object.keys(errors).length) {
      setFormError('Some parameters are not valid: see the fields marked above.');
      const first = fields.find((f) => errors[f.name]);
      if (first) document.getElementById(`p-${first.name}`)?.focus();
      return;
    }
    setBusy(true);
    try {
      // a run goes to its experiment's namespace: without one chosen, this namespace's Default
      // (the KFP API alone would pick the Default of namespace `default`)
      const experimentId = experiment || (await defaultExperimentId(api, namespace));
      const req = { displayName: runName.trim() || pipelineLabel, pipelineId: version.spec.pipelineName, versionId: version.metadata?.name ?? '', parameters, experimentId };
      if (recurring) {
        const trigger = cron.trim() ? { cron: cron.trim() } : { intervalSecond: Number(interval) };
        const r = await createRecurringRun(api, { ...req, trigger, maxConcurrency: Number(maxConcurrency) || 1, enabled, namespace });
        navigate(objectHref('recurringruns', namespace, r.recurring_run_id));
      } else {
        const runs = kinds.plural('runs');
        const r = caching || !runs ? await createRun(api, req) : await createUncachedRun(api, runs, namespace, { ...req, spec: version.spec.pipelineSpec, platformSpec: version.spec.platformSpec });
        navigate(objectHref('runs', namespace, r.run_id));
      }
    } catch (e) {
      const placed = placeServerError(fields, messageOf(e), e instanceof ApiError ? e.causes : []);
      setServerErrors(placed.fields);
      setFormError(placed.general.length ? placed.general.join('\n') : 'The server refused some parameters: see the fields marked above.');
      const first = fields.find((f) => placed.fields[f.name]);
      if (first) document.getElementById(`p-${first.name}`)?.focus();
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      className="card runform"
      aria-label="Run the pipeline"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <div className="formgrid">
        <label htmlFor="run-name">Run name</label>
        <input id="run-name" type="text" value={runName} onChange={(e) => setRunName(e.target.value)} />
        <label htmlFor="run-exp">Experiment</label>
        <select id="run-exp" value={experiment} onChange={(e) => setExperiment(e.target.value)}>
          <option value="">Default</option>
          {experiments.items.filter((x) => x.metadata?.labels?.[KfpLabels.storageState] !== 'ARCHIVED' && x.spec?.displayName !== 'Default').map((x) => (
            <option key={x.metadata?.name} value={x.metadata?.name}>
              {x.spec?.displayName ?? x.metadata?.name}
            </option>
          ))}
        </select>
        {recurring ? null : (
          <>
            <label htmlFor="run-cache">Caching</label>
            <label className="inline">
              <input id="run-cache" type="checkbox" checked={caching} onChange={(e) => setCaching(e.target.checked)} />
              <span className="muted small">{caching ? 'tasks that ran before with the same inputs reuse their outputs' : 'every task runs again, whatever ran before'}</span>
            </label>
          </>
        )}
      </div>
      <h3>Parameters</h3>
      {fields.length === 0 ? <p className="muted">This pipeline takes no parameters.</p> : null}
      <div className="formgrid">
        {fields.map((f) => {
          const err = errorOf(f.name);
          const id = `p-${f.name}`;
          return (
            <div key={f.name} className="fieldrow">
              <label htmlFor={id}>
                {f.name}
                <span className="muted small"> {f.type.toLowerCase().replace('number_', '')}{f.optional ? ', optional' : ''}</span>
              </label>
              {f.type === 'BOOLEAN' ? (
                <select id={id} aria-invalid={err ? true : undefined} aria-describedby={err ? `${id}-err` : undefined} value={texts[f.name] ?? f.initial} onChange={(e) => { setTexts({ ...texts, [f.name]: e.target.value }); setTouched({ ...touched, [f.name]: true }); }}>
                  {f.initial === '' ? <option value="">{f.optional ? '(not set)' : '(choose)'}</option> : null}
                  <option value="true">true</option>
                  <option value="false">false</option>
                </select>
              ) : (
                <input
                  id={id}
                  type="text"
                  aria-invalid={err ? true : undefined}
                  aria-describedby={err ? `${id}-err` : undefined}
                  placeholder={f.hasDefault ? '' : f.type === 'LIST' ? '[ ]' : f.type === 'STRUCT' ? '{ }' : ''}
                  value={texts[f.name] ?? f.initial}
                  onChange={(e) => {
                    setTexts({ ...texts, [f.name]: e.target.value });
                    // checked as typed, not on blur: an error appearing on blur moves the submit
                    // button down between mouse-down and mouse-up, and the click is lost
                    setTouched({ ...touched, [f.name]: true });
                    const { [f.name]: _, ...rest } = serverErrors;
                    setServerErrors(rest);
                  }}
                />
              )}
              {f.description ? <div className="muted small">{f.description}</div> : null}
              {err ? (
                <div id={`${id}-err`} className="fielderror" role="alert">
                  {err}
                </div>
              ) : null}
            </div>
          );
        })}
      </div>
      <fieldset className="recurring">
        <label>
          <input type="checkbox" checked={recurring} onChange={(e) => setRecurring(e.target.checked)} /> Run on a schedule (recurring run)
        </label>
        {recurring ? (
          <div className="formgrid">
            <label htmlFor="cron">Cron (6 fields, as KFP)</label>
            <input id="cron" type="text" placeholder="0 0 * * * *  (empty: every interval)" value={cron} onChange={(e) => setCron(e.target.value)} />
            <label htmlFor="interval">Interval, seconds</label>
            <input id="interval" type="number" min={1} value={interval} disabled={cron.trim() !== ''} onChange={(e) => setInterval(e.target.value)} />
            <label htmlFor="maxc">Max concurrent runs</label>
            <input id="maxc" type="number" min={1} value={maxConcurrency} onChange={(e) => setMaxConcurrency(e.target.value)} />
            <label htmlFor="rr-enabled">Enabled</label>
            <label className="inline">
              <input id="rr-enabled" type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
              <span className="muted small">{enabled ? 'starts runs on the schedule once created' : 'created disabled: enable it on its page'}</span>
            </label>
          </div>
        ) : null}
      </fieldset>
      {formError ? (
        <div className="notice bad" role="alert">
          {formError}
        </div>
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Starting…' : recurring ? 'Create recurring run' : 'Start run'}
        </button>
        <a href={href({ namespace, plural: 'runs' })} className="muted">
          See runs
        </a>
      </div>
    </form>
  );
}
