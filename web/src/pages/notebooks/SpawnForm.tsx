// "New notebook": the Jupyter web app's form over Skiff's copy of its spawner config. Before creating
// anything the form asks the server for a dry run of the PVCs, the Notebook and the server's Pod, so
// a field the server refuses says so beside the field, and a request beyond the namespace's
// ResourceQuota shows the server's own 403 ("exceeded quota") where the resource was asked for.
import { useState } from 'react';
import type { ReactNode } from 'react';
import { useApi } from '../../api/context';
import { ApiError, messageOf } from '../../api/errors';
import type { KindInfo } from '../../api/kinds';
import type { DataVolume, FormField, ServerType, SpawnForm as Form } from './spawner';
import { defaultForm, fieldOf, formProblems, quotaField, serverTypes, spawnerDefaults, spawnObjects, volumeName } from './spawner';

type Problems = Partial<Record<FormField, string>>;

function Field({ label, id, problem, hint, children }: { label: string; id: string; problem?: string; hint?: ReactNode; children: ReactNode }) {
  return (
    <div className={`nb-field${problem ? ' nb-bad' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {children}
      {problem ? (
        <div className="nb-problem" role="alert" id={`${id}-problem`}>
          {problem}
        </div>
      ) : hint ? (
        <div className="muted small">{hint}</div>
      ) : null}
    </div>
  );
}

export function SpawnForm({ kind, namespace, creator, onDone }: { kind: KindInfo; namespace: string; creator?: string; onDone: (name?: string) => void }) {
  const { api, kinds } = useApi();
  const config = spawnerDefaults;
  const [form, setForm] = useState<Form>(() => defaultForm(config));
  const [custom, setCustom] = useState(false);
  const [problems, setProblems] = useState<Problems>({});
  const [busy, setBusy] = useState(false);
  const set = <K extends keyof Form>(k: K, v: Form[K]): void => setForm((f) => ({ ...f, [k]: v }));
  const images = config.images[form.serverType];

  const refusal = (e: unknown): Problems => {
    if (!(e instanceof ApiError)) return { form: messageOf(e) };
    if (e.code === 403 && /exceeded quota/.test(e.message)) return { [quotaField(e.message)]: e.message };
    if (e.causes.length) {
      const out: Problems = {};
      for (const c of e.causes) {
        const f = fieldOf(c.field, form.gpuVendor);
        out[f] = [out[f], c.field && f === 'form' ? `${c.field}: ${c.message ?? ''}` : c.message].filter(Boolean).join('; ');
      }
      return out;
    }
    return { form: e.message };
  };

  const submit = async (): Promise<void> => {
    const early = formProblems(form);
    setProblems(early);
    if (Object.keys(early).length) return;
    const { notebook, pvcs } = spawnObjects(form, namespace, config, creator);
    const pvcKind = kinds.plural('persistentvolumeclaims');
    const podKind = kinds.plural('pods');
    setBusy(true);
    try {
      // every object first as a dry run: nothing is made unless all of it would be admitted
      for (const p of pvcs) if (pvcKind) await api.create(pvcKind, namespace, p, true);
      await api.create(kind, namespace, notebook, true);
      // the server's Pod, as the controller will make it: quota admission judges Pods, not Notebooks
      if (podKind) {
        const tmpl = notebook.spec.template;
        await api.create(podKind, namespace, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `${notebook.metadata.name}-0`, namespace }, spec: tmpl.spec }, true);
      }
      for (const p of pvcs) {
        if (!pvcKind) break;
        try {
          await api.create(pvcKind, namespace, p);
        } catch (e) {
          // a workspace kept from a notebook of the same name is reused, as the web app does
          if (!(e instanceof ApiError && e.code === 409)) throw e;
        }
      }
      await api.create(kind, namespace, notebook);
      onDone(notebook.metadata.name);
    } catch (e) {
      setProblems(refusal(e));
    } finally {
      setBusy(false);
    }
  };

  const setVolume = (i: number, v: Partial<DataVolume>): void => set('dataVolumes', form.dataVolumes.map((d, j) => (j === i ? { ...d, ...v } : d)));

  return (
    <section className="card nb-spawn" aria-label="New notebook">
      <header className="nb-spawn-head">
        <h2>New notebook</h2>
        <span className="muted small">
          A notebook server in <b>{namespace}</b>, with a home volume that keeps your files and <code>pip install --user</code> packages across stops.
        </span>
      </header>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <div className="nb-grid">
          <Field label="Name" id="nb-name" problem={problems.name} hint="Lowercase letters, digits and “-”.">
            <input id="nb-name" value={form.name} onChange={(e) => set('name', e.target.value)} autoFocus placeholder="my-notebook" spellCheck={false} />
          </Field>
          <Field label="Server type" id="nb-type">
            <select
              id="nb-type"
              value={form.serverType}
              onChange={(e) => {
                const t = e.target.value as ServerType;
                setForm((f) => ({ ...f, serverType: t, image: config.images[t].value }));
                setCustom(false);
              }}
            >
              {serverTypes.map((t) => (
                <option key={t.type} value={t.type}>
                  {t.label}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Image" id="nb-image" problem={problems.image} hint={form.serverType === 'jupyter' ? 'Kubeflow’s Jupyter images run as JupyterLab environments on this machine.' : 'Runs where Skiff maps this image to an environment.'}>
            {custom ? (
              <input id="nb-image" value={form.image} onChange={(e) => set('image', e.target.value)} spellCheck={false} />
            ) : (
              <select id="nb-image" value={form.image} onChange={(e) => set('image', e.target.value)}>
                {images.options.map((o) => (
                  <option key={o} value={o}>
                    {o.slice(o.lastIndexOf('/') + 1)}
                  </option>
                ))}
              </select>
            )}
            {config.allowCustomImage ? (
              <label className="nb-check small">
                <input type="checkbox" checked={custom} onChange={(e) => setCustom(e.target.checked)} /> Custom image
              </label>
            ) : null}
          </Field>
          <Field label="CPUs" id="nb-cpu" problem={problems.cpu} hint={`Requested; the limit is ${config.cpu.limitFactor}×.`}>
            <input id="nb-cpu" value={form.cpu} onChange={(e) => set('cpu', e.target.value)} inputMode="decimal" />
          </Field>
          <Field label="Memory" id="nb-memory" problem={problems.memory} hint={`Requested (Gi when no unit); the limit is ${config.memory.limitFactor}×.`}>
            <input id="nb-memory" value={form.memory} onChange={(e) => set('memory', e.target.value)} />
          </Field>
          <Field label="GPUs" id="nb-gpus" problem={problems.gpus} hint="Counted against the namespace’s GPU quota.">
            <div className="nb-row">
              <select id="nb-gpus" value={form.gpus} onChange={(e) => set('gpus', e.target.value)}>
                <option value="none">None</option>
                {['1', '2', '4', '8'].map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
              </select>
              <select aria-label="GPU vendor" value={form.gpuVendor} onChange={(e) => set('gpuVendor', e.target.value)} disabled={form.gpus === 'none'}>
                {config.gpus.vendors.map((v) => (
                  <option key={v.limitsKey} value={v.limitsKey}>
                    {v.uiName}
                  </option>
                ))}
              </select>
            </div>
          </Field>
        </div>

        <h3>Workspace volume</h3>
        <div className={`nb-grid${problems.workspace ? ' nb-bad' : ''}`}>
          <label className="nb-check">
            <input type="checkbox" checked={form.workspace} onChange={(e) => set('workspace', e.target.checked)} /> A new volume for <code>{config.workspaceVolume.mount}</code>
          </label>
          {form.workspace ? (
            <>
              <Field label="Volume name" id="nb-ws-name" hint={form.name ? `Will be ${volumeName(form.workspaceName, form.name)}` : undefined}>
                <input id="nb-ws-name" value={form.workspaceName} onChange={(e) => set('workspaceName', e.target.value)} spellCheck={false} />
              </Field>
              <Field label="Size" id="nb-ws-size">
                <input id="nb-ws-size" value={form.workspaceSize} onChange={(e) => set('workspaceSize', e.target.value)} />
              </Field>
            </>
          ) : (
            <span className="muted small">Without one, files are lost when the notebook stops.</span>
          )}
        </div>
        {problems.workspace ? (
          <div className="nb-problem" role="alert">
            {problems.workspace}
          </div>
        ) : null}

        <h3>Data volumes</h3>
        {form.dataVolumes.map((d, i) => (
          <div className="nb-grid nb-volume" key={i}>
            <Field label="Claim" id={`nb-dv-${i}`}>
              <input id={`nb-dv-${i}`} value={d.name} onChange={(e) => setVolume(i, { name: e.target.value })} spellCheck={false} />
            </Field>
            <label className="nb-check">
              <input type="checkbox" checked={d.existing} onChange={(e) => setVolume(i, { existing: e.target.checked })} /> Existing claim
            </label>
            {d.existing ? null : (
              <Field label="Size" id={`nb-dv-size-${i}`}>
                <input id={`nb-dv-size-${i}`} value={d.size} onChange={(e) => setVolume(i, { size: e.target.value })} />
              </Field>
            )}
            <Field label="Mount path" id={`nb-dv-mount-${i}`}>
              <input id={`nb-dv-mount-${i}`} value={d.mount} onChange={(e) => setVolume(i, { mount: e.target.value })} spellCheck={false} />
            </Field>
            <button type="button" onClick={() => set('dataVolumes', form.dataVolumes.filter((_, j) => j !== i))} aria-label={`Remove data volume ${i + 1}`}>
              Remove
            </button>
          </div>
        ))}
        <button type="button" onClick={() => set('dataVolumes', [...form.dataVolumes, { name: `{notebook-name}-data-${form.dataVolumes.length + 1}`, size: '5Gi', mount: `/home/jovyan/data-${form.dataVolumes.length + 1}`, existing: false }])}>
          Add data volume
        </button>

        <h3>Advanced</h3>
        <label className="nb-check">
          <input type="checkbox" checked={form.shm} onChange={(e) => set('shm', e.target.checked)} /> Enable shared memory (<code>/dev/shm</code> in memory, for PyTorch data loaders)
        </label>

        {problems.form ? (
          <div className="notice bad" role="alert">
            {problems.form}
          </div>
        ) : null}
        <div className="toolbar nb-spawn-actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Launching…' : 'Launch'}
          </button>
          <button type="button" onClick={() => onDone()}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
