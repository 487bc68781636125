// What a Katib trial costs beyond its payload: the same payload run N times one after another, first
// as plain batch Jobs (each created when the previous one completed), then as the N trials of an
// Experiment with parallelTrialCount 1 (the Experiment, its Suggestion, a Trial, its Job, metrics
// collection, the next assignment). The difference per trial is the tuning machinery's overhead.
import { TestServer } from '../test/harness.js';
import { fmtMs, nowMs } from './stats.js';

const payload = ['python3', '-c', 'import sys; print(f"loss={float(sys.argv[1]) ** 2}")'];

/** polls every 5 ms (the harness's `until` polls every 50 ms, which would be charged to the plain Jobs) */
async function waitFor<T>(_s: TestServer, what: string, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const isTrue = (o: any, type: string) => o?.status?.conditions?.some((c: any) => c.type === type && c.status === 'True');

/** prints its rows and returns the overhead per trial in ms */
export async function trialOverheadBench(row: (label: string, value: string, note?: string) => void, n = 10): Promise<number> {
  const s = await TestServer.start();
  try {
    const jobs = '/apis/batch/v1/namespaces/default/jobs';
    const t0 = nowMs();
    for (let i = 0; i < n; i++) {
      const name = `plain-${i}`;
      await s.create(jobs, { apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'training', image: 'python:3.11', command: [...payload, String(i / n)] }] } } } });
      await waitFor(s, name, async () => (isTrue(await s.get(`${jobs}/${name}`), 'Complete') ? true : undefined));
    }
    const plain = (nowMs() - t0) / n;
    const exps = '/apis/kubeflow.org/v1beta1/namespaces/default/experiments';
    const t1 = nowMs();
    await s.create(exps, {
      apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name: 'overhead' },
      spec: {
        objective: { type: 'minimize', objectiveMetricName: 'loss' }, algorithm: { algorithmName: 'random' },
        parallelTrialCount: 1, maxTrialCount: n,
        parameters: [{ name: 'x', parameterType: 'double', feasibleSpace: { min: '0', max: '1' } }],
        trialTemplate: {
          primaryContainerName: 'training', trialParameters: [{ name: 'x', reference: 'x' }],
          trialSpec: { apiVersion: 'batch/v1', kind: 'Job', spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'training', image: 'python:3.11', command: [...payload, '${trialParameters.x}'] }] } } } },
        },
      },
    });
    const done = await waitFor(s, 'the experiment', async () => {
      const e = await s.get(`${exps}/overhead`);
      return isTrue(e, 'Succeeded') || isTrue(e, 'Failed') ? e : undefined;
    });
    const trial = (nowMs() - t1) / n;
    if (done.status.trialsSucceeded !== n) throw new Error(`the experiment ended with ${JSON.stringify(done.status)}`);
    row(`plain Job, create to Complete (${n} in a row)`, fmtMs(plain), 'the payload: python3 printing loss=');
    row(`Katib trial, same payload (${n} in a row)`, fmtMs(trial), 'Experiment → Suggestion → Trial → Job → metrics → next');
    row('overhead per trial', fmtMs(trial - plain), `aim < 100 ms; ratio trial/Job ${(trial / plain).toFixed(2)}x`);
    return trial - plain;
  } finally {
    await s.cleanup();
  }
}
