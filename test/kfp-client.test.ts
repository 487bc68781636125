// The real kfp SDK's Client against the real server: the KFP v2beta1 REST API end to end.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestServer, repoRoot } from './harness.js';
import { conformanceDir } from '../src/conformance-path.js';

const python = join(repoRoot, '.venv', 'bin', 'python');
const invalidDir = join(conformanceDir(), 'kfp', 'pipelines', 'invalid');

const PIPELINES = `
from kfp import dsl, compiler
from kfp.dsl import Input, Output, Markdown, Metrics

@dsl.component
def shout(msg: str) -> str:
    return msg.upper() + '!'

@dsl.component
def report(text: str, page: Output[Markdown], scores: Output[Metrics]):
    with open(page.path, 'w') as f:
        f.write('# ' + text)
    scores.log_metric('length', len(text))

@dsl.component
def measure(page: Input[Markdown]) -> int:
    with open(page.path) as f:
        return len(f.read())

@dsl.pipeline(name='tiny')
def tiny(msg: str = 'hello'):
    s = shout(msg=msg)
    r = report(text=s.output)
    measure(page=r.outputs['page'])

@dsl.component
def nap(seconds: int):
    import time
    time.sleep(seconds)

@dsl.pipeline(name='sleepy')
def sleepy(seconds: int = 300):
    nap(seconds=seconds)

compiler.Compiler().compile(tiny, 'tiny.yaml')
compiler.Compiler().compile(sleepy, 'sleepy.yaml')
`;

const PRELUDE = `
import json, sys, time, warnings
warnings.filterwarnings('ignore')
import kfp
from kfp_server_api.exceptions import ApiException
c = kfp.Client(host=sys.argv[1])
out = {}
def rejected(fn):
    try:
        fn()
    except ApiException as e:
        return {'status': e.status, 'body': e.body if isinstance(e.body, str) else e.body.decode()}
    return None
`;

describe('kfp.Client against the KFP v2beta1 API', { skip: !existsSync(python) && 'no .venv with the kfp SDK' }, () => {
  let s: TestServer;
  let dir: string;

  /** runs a script with the kfp SDK; it fills `out`, which comes back as JSON */
  const py = (body: string): Promise<any> => new Promise((resolve, reject) => {
    const file = join(dir, `script-${Date.now()}-${Math.random().toString(36).slice(2)}.py`);
    writeFileSync(file, `${PRELUDE}\n${body}\nprint('RESULT ' + json.dumps(out, default=str))\n`);
    const p = spawn(python, [file, s.url], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('exit', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
      if (code !== 0 || !line) reject(new Error(`python exited ${code}:\n${stdout}\n${stderr}\n--- server ---\n${s.output.slice(-3000)}`));
      else resolve(JSON.parse(line.slice('RESULT '.length)));
    });
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-kfp-'));
    writeFileSync(join(dir, 'pipelines.py'), PIPELINES);
    await new Promise<void>((resolve, reject) => {
      const p = spawn(python, ['pipelines.py'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      p.stderr.on('data', (d) => (err += d));
      p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`compiling failed: ${err}`))));
    });
    // a version whose spec names a component that does not exist
    writeFileSync(join(dir, 'bad-ref.yaml'), readFileSync(join(dir, 'tiny.yaml'), 'utf8').replace('name: comp-measure', 'name: comp-nowhere'));
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('uploads pipelines and versions, runs them by package and by version, and reads runs back', async () => {
    const r = await py(`
p = c.upload_pipeline('tiny.yaml', pipeline_name='tiny-pipeline', description='three steps')
out['pipeline'] = p.to_dict()
v = c.upload_pipeline_version('tiny.yaml', 'second', pipeline_id=p.pipeline_id)
out['version'] = v.to_dict()
out['listed'] = [x.display_name for x in c.list_pipelines().pipelines]
out['id_by_name'] = c.get_pipeline_id('tiny-pipeline')
out['versions'] = sorted(x.display_name for x in c.list_pipeline_versions(p.pipeline_id).pipeline_versions)
e = c.create_experiment('nightly', description='runs at night')
out['experiment'] = e.to_dict()
out['experiment_again'] = c.create_experiment('nightly').experiment_id
run1 = c.create_run_from_pipeline_package('tiny.yaml', arguments={'msg': 'abc'}, run_name='from-package')
run2 = c.run_pipeline(e.experiment_id, 'from-version', pipeline_id=p.pipeline_id, version_id=v.pipeline_version_id, params={'msg': 'xyz'})
done1 = c.wait_for_run_completion(run1.run_id, timeout=120, sleep_duration=0.3)
done2 = c.wait_for_run_completion(run2.run_id, timeout=120, sleep_duration=0.3)
out['run1'] = c.get_run(run1.run_id).to_dict()
out['run2'] = done2.to_dict()
out['default_experiment'] = c.get_experiment(experiment_name='Default').experiment_id
f = json.dumps({'predicates': [{'operation': 1, 'key': 'display_name', 'stringValue': 'from-version'}]})
out['filtered'] = [x.run_id for x in c.list_runs(filter=f).runs]
f = json.dumps({'predicates': [{'operation': 'EQUALS', 'key': 'state', 'string_value': 'SUCCEEDED'}]})
out['succeeded'] = c.list_runs(filter=f, sort_by='created_at desc').total_size
out['in_experiment'] = [x.run_id for x in c.list_runs(experiment_id=e.experiment_id).runs]
out['page1'] = c.list_runs(page_size=1, sort_by='display_name').to_dict()
out['page2'] = [x.display_name for x in c.list_runs(page_size=1, sort_by='display_name', page_token=out['page1']['next_page_token']).runs]
c.archive_run(run1.run_id)
out['archived'] = c.get_run(run1.run_id).storage_state
f = json.dumps({'predicates': [{'operation': 1, 'key': 'storage_state', 'stringValue': 'ARCHIVED'}]})
out['archived_listed'] = [x.run_id for x in c.list_runs(filter=f).runs]
c.unarchive_run(run1.run_id)
out['unarchived'] = c.get_run(run1.run_id).storage_state
out['delete_refused'] = rejected(lambda: c.delete_pipeline(p.pipeline_id))
`);
    assert.equal(r.pipeline.display_name, 'tiny-pipeline');
    assert.equal(r.pipeline.description, 'three steps');
    assert.match(r.pipeline.pipeline_id, /^[0-9a-f-]{36}$/);
    assert.equal(r.version.pipeline_id, r.pipeline.pipeline_id);
    assert.deepEqual(r.listed, ['tiny-pipeline']);
    assert.equal(r.id_by_name, r.pipeline.pipeline_id);
    assert.deepEqual(r.versions, ['second', 'tiny-pipeline']);
    assert.equal(r.experiment.display_name, 'nightly');
    assert.equal(r.experiment.storage_state, 'AVAILABLE');
    assert.equal(r.experiment_again, r.experiment.experiment_id);

    const run1 = r.run1;
    assert.equal(run1.state, 'SUCCEEDED', JSON.stringify(run1));
    assert.equal(run1.display_name, 'from-package');
    assert.equal(run1.experiment_id, r.default_experiment);
    assert.deepEqual(run1.runtime_config.parameters, { msg: 'abc' });
    assert.ok(run1.pipeline_spec.pipelineInfo, 'the spec comes back as sent');
    assert.notEqual(String(run1.finished_at).slice(0, 4), '1970');
    const tasks = run1.run_details.task_details as any[];
    const byName = new Map(tasks.map((t) => [t.display_name, t]));
    assert.deepEqual([...byName.keys()].sort(), ['measure', 'report', 'shout', 'tiny']);
    const root = byName.get('tiny');
    for (const name of ['shout', 'report', 'measure']) {
      const t = byName.get(name);
      assert.equal(t.state, 'SUCCEEDED');
      assert.equal(t.parent_task_id, root.task_id);
      assert.ok(t.pod_name, `${name} has a pod`);
      assert.ok(root.child_tasks.some((c: any) => c.task_id === t.task_id));
    }
    const produced = byName.get('report').outputs.page.artifact_ids[0];
    assert.deepEqual(byName.get('measure').inputs.page.artifact_ids, [produced], 'lineage: measure read what report wrote');

    assert.equal(r.run2.state, 'SUCCEEDED');
    assert.equal(r.run2.experiment_id, r.experiment.experiment_id);
    assert.deepEqual(r.run2.pipeline_version_reference, { pipeline_id: r.pipeline.pipeline_id, pipeline_version_id: r.version.pipeline_version_id });
    assert.deepEqual(r.filtered, [r.run2.run_id]);
    assert.equal(r.succeeded, 2);
    assert.deepEqual(r.in_experiment, [r.run2.run_id]);
    assert.equal(r.page1.total_size, 2);
    assert.deepEqual(r.page1.runs.map((x: any) => x.display_name), ['from-package']);
    assert.deepEqual(r.page2, ['from-version']);
    assert.equal(r.archived, 'ARCHIVED');
    assert.deepEqual(r.archived_listed, [run1.run_id]);
    assert.equal(r.unarchived, 'AVAILABLE');
    assert.equal(r.delete_refused.status, 400);
    assert.match(r.delete_refused.body, /has 2 version\(s\).*cascade=true/);

    // lineage and artifact read-back
    const arts = await s.get(`/apis/v2beta1/runs/${run1.run_id}/artifacts`);
    const page = arts.artifacts.find((a: any) => a.artifact_id === produced);
    assert.equal(page.producer_task, 'report');
    assert.equal(page.type.schemaTitle, 'system.Markdown');
    assert.deepEqual(page.consumers, [{ task_id: 'measure', input_name: 'page' }]);
    const one = await s.get(`/apis/v2beta1/artifacts/${produced}?run_id=${run1.run_id}`);
    assert.equal(one.uri, page.uri);
    const md = await s.req('GET', `/apis/v2beta1/runs/${run1.run_id}/nodes/report/artifacts/page:read`);
    assert.equal(md.status, 200);
    assert.equal(md.text, '# ABC!');
    // a capped preview: the first bytes, and the whole size beside them
    const head = await s.req('GET', `/apis/v2beta1/runs/${run1.run_id}/nodes/report/artifacts/page:read?limit=3`);
    assert.equal(head.text, '# A');
    const bad = await s.req('GET', `/apis/v2beta1/runs/${run1.run_id}/nodes/report/artifacts/page:read?limit=-1`);
    assert.equal(bad.status, 400);
    assert.match(bad.text, /limit/);
    const metrics = await s.get(`/apis/v2beta1/runs/${run1.run_id}/nodes/report/artifacts/scores:read`);
    assert.deepEqual(metrics, { length: 4 });
    const missing = await s.req('GET', `/apis/v2beta1/runs/${run1.run_id}/nodes/report/artifacts/nothing:read`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 5);
  });

  it('rejects invalid uploads and versions with a 400 that says what is wrong', { skip: existsSync(invalidDir) ? false : `no upstream corpus at ${invalidDir}` }, async () => {
    const files = readdirSync(invalidDir).filter((f) => f.endsWith('.yaml')).sort();
    assert.ok(files.length > 0, `no invalid pipelines in ${invalidDir}`);
    const r = await py(`
out['invalid'] = {}
for f in ${JSON.stringify(files)}:
    out['invalid'][f] = rejected(lambda: c.upload_pipeline(${JSON.stringify(invalidDir)} + '/' + f, pipeline_name='bad-' + f.replace('.yaml', '').replace('_', '-')))
out['listed'] = [x.display_name for x in (c.list_pipelines(page_size=100).pipelines or []) if x.display_name.startswith('bad-')]
p = c.upload_pipeline('tiny.yaml', pipeline_name='versioned')
out['bad_version'] = rejected(lambda: c.upload_pipeline_version('bad-ref.yaml', 'broken', pipeline_id=p.pipeline_id))
out['duplicate'] = rejected(lambda: c.upload_pipeline('tiny.yaml', pipeline_name='versioned'))
out['bad_param'] = rejected(lambda: c.create_run_from_pipeline_package('tiny.yaml', arguments={'nope': 1}))
out['pipeline_id'] = p.pipeline_id
e = c.create_experiment('cron-checks')
out['bad_cron'] = rejected(lambda: c.create_recurring_run(e.experiment_id, 'bad-cron', cron_expression='61 * * * * *', pipeline_package_path='tiny.yaml'))
out['cron'] = c.create_recurring_run(e.experiment_id, 'hourly', cron_expression='0 0 * * * *', pipeline_package_path='tiny.yaml', enabled=False).to_dict()
c.delete_recurring_run(out['cron']['recurring_run_id'])
`);
    const expected: Record<string, RegExp> = {
      'empty_file.yaml': /empty pipeline file/,
      'invalid_yaml.yaml': /components_1/,
      'no_name.yaml': /pipelineInfo\.name/,
    };
    for (const f of files) {
      const got = r.invalid[f];
      assert.ok(got, `${f} was accepted`);
      assert.equal(got.status, 400, `${f}: ${got.body}`);
      const body = JSON.parse(got.body);
      assert.match(body.error_message, expected[f] ?? /./, f);
    }
    assert.deepEqual(r.listed, [], 'a rejected upload leaves no pipeline behind');
    assert.equal(r.bad_version.status, 400);
    assert.match(r.bad_version.body, /root\.dag\.tasks\.measure\.componentRef/);
    assert.equal(r.duplicate.status, 409);
    assert.equal(r.bad_param.status, 400);
    assert.match(r.bad_param.body, /runtime_config\.parameters\.nope/);

    assert.equal(r.bad_cron.status, 400);
    assert.match(JSON.parse(r.bad_cron.body).message, /trigger\.cron_schedule\.cron: Invalid value: "61 \* \* \* \* \*": second: 61 is out of range 0-59/);
    assert.equal(r.cron.status, 'DISABLED');
    assert.equal(r.cron.trigger.cron_schedule.cron, '0 0 * * * *');

    // the JSON API names the field of the request
    const pid = r.pipeline_id;
    const spec = await s.get(`/apis/v2beta1/pipelines/${pid}/versions`).then((l) => l.pipeline_versions[0].pipeline_spec);
    const broken = structuredClone(spec);
    broken.root.dag.tasks.shout.componentRef.name = 'comp-gone';
    const res = await s.req('POST', `/apis/v2beta1/pipelines/${pid}/versions`, { display_name: 'json-broken', pipeline_spec: broken });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.code, 3);
    assert.match(res.body.message, /pipeline_spec\.root\.dag\.tasks\.shout\.componentRef/);
    const unknown = await s.req('POST', '/apis/v2beta1/experiments', { display_name: 'x', colour: 'red' });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.message, /unknown field "colour"/);
    const nf = await s.req('GET', '/apis/v2beta1/runs/00000000-0000-4000-8000-000000000000');
    assert.equal(nf.status, 404);
  });

  it('terminates a running run and retries only failed or canceled ones', async () => {
    const r = await py(`
run = c.create_run_from_pipeline_package('sleepy.yaml', arguments={'seconds': 300}, run_name='long', enable_caching=False)
t0 = time.time()
while c.get_run(run.run_id).state != 'RUNNING' and time.time() - t0 < 60:
    time.sleep(0.2)
out['before'] = c.get_run(run.run_id).state
c.terminate_run(run.run_id)
t0 = time.time()
while c.get_run(run.run_id).state not in ('CANCELED',) and time.time() - t0 < 30:
    time.sleep(0.2)
out['after'] = c.get_run(run.run_id).state
out['run_id'] = run.run_id
out['terminate_again'] = rejected(lambda: c.terminate_run(run.run_id))
ok = c.create_run_from_pipeline_package('sleepy.yaml', arguments={'seconds': 0}, run_name='short', enable_caching=False)
c.wait_for_run_completion(ok.run_id, timeout=60, sleep_duration=0.3)
out['retry_succeeded'] = rejected(lambda: c.runs.run_service_retry_run(run_id=ok.run_id))
c.runs.run_service_retry_run(run_id=run.run_id)
t0 = time.time()
while c.get_run(run.run_id).state != 'RUNNING' and time.time() - t0 < 30:
    time.sleep(0.2)
out['retried'] = c.get_run(run.run_id).state
c.terminate_run(run.run_id)
`);
    assert.equal(r.before, 'RUNNING');
    assert.ok(['CANCELING', 'CANCELED'].includes(r.after), r.after);
    assert.equal(r.terminate_again.status, 400);
    assert.equal(r.retry_succeeded.status, 400);
    assert.match(r.retry_succeeded.body, /only FAILED or CANCELED runs can be retried/);
    const obj = await s.get(`/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs/${r.run_id}`);
    assert.equal(obj.spec.retryGeneration, 1);
    assert.equal(r.retried, 'RUNNING', 'the canceled run runs again');
    assert.equal(obj.spec.terminate, true, 'and was terminated again');
    await s.req('DELETE', `/apis/v2beta1/runs/${r.run_id}`);
  });

  it('starts recurring runs on a periodic trigger, one at a time, until disabled and deleted', async () => {
    const r = await py(`
e = c.create_experiment('scheduled')
rr = c.create_recurring_run(e.experiment_id, 'every-second', interval_second=1, max_concurrency=1, pipeline_package_path='sleepy.yaml', params={'seconds': 2}, enable_caching=False)
out['created'] = rr.to_dict()
t0 = time.time()
def mine():
    return [x for x in (c.list_runs(experiment_id=e.experiment_id, page_size=100).runs or []) if x.recurring_run_id == rr.recurring_run_id]
while len([x for x in mine() if x.state == 'SUCCEEDED']) < 2 and time.time() - t0 < 45:
    time.sleep(0.3)
out['listed'] = [x.display_name for x in c.list_recurring_runs(experiment_id=e.experiment_id).recurring_runs]
c.disable_recurring_run(rr.recurring_run_id)
out['status'] = c.get_recurring_run(rr.recurring_run_id).status
time.sleep(0.5)
out['at_disable'] = len(mine())
time.sleep(2.5)
out['later'] = len(mine())
out['runs'] = [c.get_run(x.run_id).to_dict() for x in mine()]
c.delete_recurring_run(rr.recurring_run_id)
out['gone'] = rejected(lambda: c.get_recurring_run(rr.recurring_run_id))
`);
    assert.equal(r.created.status, 'ENABLED');
    assert.equal(r.created.max_concurrency, '1');
    assert.equal(r.created.trigger.periodic_schedule.interval_second, '1');
    assert.deepEqual(r.listed, ['every-second']);
    assert.equal(r.status, 'DISABLED');
    assert.equal(r.later, r.at_disable, 'no run starts once disabled');
    const runs = (r.runs as any[]).sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));
    assert.ok(runs.filter((x) => x.state === 'SUCCEEDED').length >= 2, JSON.stringify(runs.map((x) => x.state)));
    for (let i = 1; i < runs.length; i++) {
      const prev = runs[i - 1];
      assert.ok(Date.parse(runs[i].created_at) >= Date.parse(prev.finished_at) && !String(prev.finished_at).startsWith('1970'), `max_concurrency=1: run ${i} started before run ${i - 1} finished`);
    }
    assert.equal(r.gone.status, 404);
  });
});
