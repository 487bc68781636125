// Kubeflow Notebooks (kubeflow.org/v1): the list shows each server's state, image, resources and
// last activity, live, with Connect, Stop/Start and Delete; "New notebook" is the Jupyter web app's
// spawn form. A notebook's page adds its server's state and the Pod's log to the generic tabs.
import { useState } from 'react';
import { useApi, useObject } from '../../api/context';
import { messageOf } from '../../api/errors';
import type { KindInfo } from '../../api/kinds';
import type { Notebook, Pod } from '../../api/workload-types';
import { useNav } from '../../app/nav';
import { objectHref } from '../../app/router';
import { useSession } from '../../app/session';
import { Age } from '../../components/Age';
import { ObjectList } from '../../components/ObjectList';
import { ObjectPage } from '../../components/ObjectPage';
import { StatusBadge } from '../../components/Status';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';
import { PodLogs, PodTable } from '../pods/parts';
import { SpawnForm } from './SpawnForm';
import { connectPath, imageOf, isStopped, lastActivity, notebookState, resourcesOf, shortImage, stopPatch } from './view';
import '../pods/pods.css';
import './notebooks.css';

function State({ nb }: { nb: Notebook }) {
  const s = notebookState(nb);
  return (
    <span className="nb-state">
      <StatusBadge state={s.state} title={s.why} />
      {s.why ? <span className="muted small nb-why" title={s.why}>{s.why}</span> : null}
    </span>
  );
}

/** Connect, Stop or Start: what a user does with a notebook, on the list and on its page */
function Actions({ kind, nb }: { kind: KindInfo; nb: Notebook }) {
  const { api } = useApi();
  const [busy, setBusy] = useState(false);
  const stopped = isStopped(nb);
  const running = notebookState(nb).state === 'Running';
  const name = nb.metadata?.name ?? '';
  const toggle = (): void => {
    setBusy(true);
    api
      .patch(kind, nb.metadata?.namespace, name, stopPatch(!stopped))
      .catch((e: unknown) => window.alert(messageOf(e)))
      .finally(() => setBusy(false));
  };
  return (
    <span className="nb-actions">
      {/* noopener: the notebook's tab gets no handle on the dashboard's window, nor a copy of its session storage */}
      <a className={`button${running ? ' primary' : ' disabled'}`} href={connectPath(nb)} target="_blank" rel="noopener noreferrer" aria-disabled={!running} onClick={(e) => !running && e.preventDefault()} title={running ? 'Open the server in a new tab' : 'The server is not running'}>
        Connect
      </a>
      {kind.verbs.includes('patch') ? (
        <button type="button" onClick={toggle} disabled={busy} aria-label={`${stopped ? 'Start' : 'Stop'} ${name}`}>
          {stopped ? 'Start' : 'Stop'}
        </button>
      ) : null}
    </span>
  );
}

function DeleteRow({ kind, nb }: { kind: KindInfo; nb: Notebook }) {
  const { api } = useApi();
  const name = nb.metadata?.name ?? '';
  if (!kind.verbs.includes('delete')) return null;
  return (
    <button
      type="button"
      className="danger"
      aria-label={`Delete ${name}`}
      onClick={() => {
        if (window.confirm(`Delete notebook ${name}? Its workspace volume is kept.`)) void api.remove(kind, nb.metadata?.namespace, name).catch((e: unknown) => window.alert(messageOf(e)));
      }}
    >
      Delete
    </button>
  );
}

function NotebookList({ kind, namespace }: ListPageProps) {
  const [creating, setCreating] = useState(false);
  const { user } = useSession();
  const { navigate } = useNav();
  const ns = namespace ?? 'default';
  return (
    <>
      {creating ? (
        <div className="page nb-spawn-wrap">
          <SpawnForm
            kind={kind}
            namespace={ns}
            {...(user.username ? { creator: user.username } : {})}
            onDone={(name) => {
              setCreating(false);
              if (name && !namespace) navigate(objectHref('notebooks', ns, name));
            }}
          />
        </div>
      ) : null}
      <ObjectList<Notebook>
        kind={kind}
        namespace={namespace}
        title="Notebooks"
        state={null}
        actions={
          kind.verbs.includes('create') ? (
            <button type="button" className="primary" onClick={() => setCreating(true)} disabled={creating}>
              New notebook
            </button>
          ) : null
        }
        empty={`No notebooks${namespace ? ` in ${namespace}` : ''}. Start one with “New notebook”.`}
        columns={[
          { id: 'status', header: 'Status', width: 150, value: (n) => notebookState(n).state, cell: (n) => <State nb={n} /> },
          { id: 'image', header: 'Image', width: 170, value: (n) => shortImage(n), cell: (n) => <span title={imageOf(n)}>{shortImage(n)}</span> },
          { id: 'cpu', header: 'CPU', width: 60, value: (n) => resourcesOf(n).cpu, cell: (n) => resourcesOf(n).cpu },
          { id: 'memory', header: 'Memory', width: 80, value: (n) => resourcesOf(n).memory, cell: (n) => resourcesOf(n).memory },
          { id: 'gpus', header: 'GPUs', width: 70, value: (n) => resourcesOf(n).gpus, cell: (n) => resourcesOf(n).gpus || <span className="muted">—</span> },
          {
            id: 'activity',
            header: 'Last activity',
            width: 110,
            value: (n) => lastActivity(n),
            cell: (n) => (lastActivity(n) ? <span className="nb-activity"><Age ts={lastActivity(n)} /> ago</span> : <span className="muted">—</span>),
          },
          {
            id: 'actions',
            header: '',
            width: 260,
            value: () => '',
            cell: (n) => (
              <span className="nb-rowactions">
                <Actions kind={kind} nb={n} />
                <DeleteRow kind={kind} nb={n} />
              </span>
            ),
          },
        ]}
      />
    </>
  );
}

function Summary({ nb }: { nb: Notebook }) {
  const r = resourcesOf(nb);
  const s = notebookState(nb);
  const cs = nb.status?.containerState;
  return (
    <div className="stack">
      {s.why ? (
        <div className="card whycard" role="status">
          <b>{s.state}:</b> {s.why}
        </div>
      ) : null}
      <div className="card summarygrid">
        <div><div className="label">Image</div><div className="value" title={imageOf(nb)}>{shortImage(nb)}</div></div>
        <div><div className="label">CPU · memory</div><div className="value">{r.cpu} · {r.memory}</div></div>
        <div><div className="label">GPUs</div><div className="value">{r.gpus || 'none'}</div></div>
        <div><div className="label">Ready replicas</div><div className="value">{nb.status?.readyReplicas ?? 0}</div></div>
        <div><div className="label">Container</div><div className="value">{cs?.running ? 'running' : cs?.waiting ? `waiting${cs.waiting.reason ? `: ${cs.waiting.reason}` : ''}` : cs?.terminated ? `terminated: ${cs.terminated.reason ?? cs.terminated.exitCode}` : '—'}</div></div>
        <div><div className="label">Last activity</div><div className="value">{lastActivity(nb) ? <><Age ts={lastActivity(nb)} /> ago</> : '—'}</div></div>
      </div>
    </div>
  );
}

function ServerPod({ nb, logs }: { nb: Notebook; logs: boolean }) {
  const ns = nb.metadata?.namespace ?? '';
  const pod = useObject<Pod>('pods', ns, `${nb.metadata?.name ?? ''}-0`).object;
  if (!pod) return <p className="muted">{isStopped(nb) ? 'The notebook is stopped: it has no Pod. Start it to see its log.' : 'No server Pod yet.'}</p>;
  return logs ? <PodLogs pods={[pod]} namespace={ns} /> : <PodTable pods={[pod]} />;
}

function NotebookDetail({ kind, namespace, name }: DetailPageProps) {
  return (
    <ObjectPage<Notebook>
      kind={kind}
      namespace={namespace}
      name={name}
      state={(n) => notebookState(n).state}
      actions={(n) => <Actions kind={kind} nb={n} />}
      summary={(n) => <Summary nb={n} />}
      tabs={(n) => [
        { id: 'logs', label: 'Logs', render: () => <ServerPod nb={n} logs /> },
        { id: 'pod', label: 'Pod', render: () => <ServerPod nb={n} logs={false} /> },
      ]}
    />
  );
}

export const pages: PageDef[] = [{ plural: 'notebooks', title: 'Notebooks', section: 'Notebooks', order: 10, list: NotebookList, detail: NotebookDetail }];
