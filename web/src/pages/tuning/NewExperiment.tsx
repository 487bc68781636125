// "New experiment": an Experiment written as YAML, created through the API. The server's refusal shows
// each cause on the line of the field it names, as the object editor does for a saved object.
import { useRef, useState } from 'react';
import { useApi } from '../../api/context';
import type { KindInfo } from '../../api/kinds';
import { urlName } from '../../api/kinds';
import type { KObject } from '../../api/types';
import { useNav } from '../../app/nav';
import { objectHref } from '../../app/router';
import type { Problem } from '../../components/YamlEditor';
import { YamlText, gotoLine, problemsOf } from '../../components/YamlEditor';
import { parseYaml } from '../../components/yaml';
import { exampleExperiment } from './template';

export function NewExperiment({ kind, namespace, onClose }: { kind: KindInfo; namespace: string; onClose: () => void }) {
  const { api, kinds } = useApi();
  const { navigate } = useNav();
  const [text, setText] = useState(() => exampleExperiment(namespace));
  const [problems, setProblems] = useState<Problem[]>([]);
  const [busy, setBusy] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);

  async function create(): Promise<void> {
    const parsed = parseYaml(text);
    if (parsed.problems.length) return setProblems(parsed.problems);
    const obj = parsed.value as KObject | undefined;
    if (!obj || typeof obj !== 'object') return setProblems([{ message: 'The YAML is not an object.' }]);
    const ns = obj.metadata?.namespace ?? namespace;
    setBusy(true);
    try {
      const made = await api.create<KObject>(kind, ns, obj);
      setProblems([]);
      onClose();
      navigate(objectHref(urlName(kind, kinds), made.metadata?.namespace ?? ns, made.metadata?.name ?? ''));
    } catch (e) {
      const found = problemsOf(e, text);
      setProblems(found);
      gotoLine(area.current, found.find((p) => p.line)?.line, false);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card tn-newexp" aria-label="New experiment">
      <div className="tn-newexp-head">
        <h3>New experiment</h3>
        <span className="muted small">A random search over a batch Job that prints <code>loss=…</code>; edit it, or paste one of Katib&apos;s.</span>
      </div>
      <YamlText text={text} onChange={setText} problems={problems} label="Experiment YAML" maxHeight="60vh" areaRef={area} />
      <div className="toolbar tn-newexp-actions">
        <button type="button" className="primary" disabled={busy} onClick={() => void create()}>
          {busy ? 'Creating…' : 'Create'}
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </section>
  );
}
