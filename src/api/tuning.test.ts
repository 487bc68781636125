// Katib's Experiment as the API takes it: every upstream example is accepted after Katib's
// defaulting, except those whose trial kind Skiff does not run (as Katib's default katib-config
// refuses kinds outside its trialResources); bad experiments are refused naming the field; a trial
// job is rendered by Katib's textual substitution.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import YAML, { parseAllDocuments } from 'yaml';
import { conformanceDir, corpusFiles } from '../conformance-path.js';
import type { FieldError } from './errors.js';
import type { KObject, StoredObject } from './meta.js';
import { clone } from './meta.js';
import type { Experiment } from './tuning.js';
import { defaultExperiment, renderTrialJob, TemplateError, validateExperiment } from './tuning.js';

const corpus = join(conformanceDir(), 'katib');

function experiments(): { file: string; obj: Experiment }[] {
  const out: { file: string; obj: Experiment }[] = [];
  for (const file of corpusFiles(corpus)) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const obj = doc.toJS() as Experiment | null;
      if (obj?.kind === 'Experiment') out.push({ file: relative(corpus, file), obj });
    }
  }
  return out;
}

function check(obj: KObject, old?: KObject): FieldError[] {
  const o = clone(obj);
  defaultExperiment(o);
  return validateExperiment(o, old as StoredObject | undefined);
}

/** Katib's own examples Skiff refuses, and the field it names */
const refused: Record<string, string> = {
  'test-e2e-testdata/invalid-experiment.yaml': 'spec.algorithm.algorithmName',
  // trial kinds Skiff does not serve (Argo, Tekton, Kubeflow Trainer v2's TrainJob)
  'v1beta1/argo/argo-workflow.yaml': 'spec.trialTemplate.trialSpec.kind',
  'v1beta1/tekton/pipeline-run.yaml': 'spec.trialTemplate.trialSpec.kind',
  'v1beta1/kubeflow-trainer/trainjob-pytorch.yaml': 'spec.trialTemplate.trialSpec.kind',
};

const base = (): Experiment => YAML.parse(`
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: ex, namespace: default}
spec:
  maxTrialCount: 6
  parallelTrialCount: 2
  objective: {type: minimize, objectiveMetricName: loss}
  algorithm: {algorithmName: random}
  parameters:
    - {name: lr, parameterType: double, feasibleSpace: {min: "0.01", max: "0.1"}}
    - {name: opt, parameterType: categorical, feasibleSpace: {list: [sgd, adam]}}
  trialTemplate:
    primaryContainerName: main
    trialParameters:
      - {name: learningRate, reference: lr}
      - {name: optimizer, reference: opt}
      - {name: jobName, reference: "\${trialSpec.Name}"}
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      metadata: {labels: {team: a}}
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
              - name: main
                image: python
                command: [python, -c, "print('loss=1')", "--lr=\${trialParameters.learningRate}", "--opt=\${trialParameters.optimizer}", "--name=\${trialParameters.jobName}"]
`) as Experiment;

const fields = (errs: FieldError[]) => errs.map((e) => e.field);

describe('Katib Experiment: defaulting and validation', () => {
  const all = experiments();
  it('finds the corpus', () => assert.ok(all.length >= 30, String(all.length)));
  for (const { file, obj } of all) {
    it(`${refused[file] ? 'refuses' : 'accepts'} ${file}`, () => {
      const errs = check(obj);
      if (refused[file]) assert.ok(fields(errs).includes(refused[file]), JSON.stringify(errs));
      else assert.deepEqual(errs, []);
    });
  }

  it('fills Katib\'s defaults: counts, resume policy, strategies for every metric, the trial kind\'s conditions, the collector', () => {
    const e = base();
    delete e.spec.parallelTrialCount;
    e.spec.objective!.additionalMetricNames = ['accuracy'];
    defaultExperiment(e);
    assert.equal(e.spec.parallelTrialCount, 3);
    assert.equal(e.spec.resumePolicy, 'Never');
    assert.deepEqual(e.spec.objective?.metricStrategies, [{ name: 'loss', value: 'min' }, { name: 'accuracy', value: 'min' }]);
    assert.equal(e.spec.trialTemplate?.successCondition, 'status.conditions.#(type=="Complete")#|#(status=="True")#');
    assert.equal(e.spec.trialTemplate?.failureCondition, 'status.conditions.#(type=="Failed")#|#(status=="True")#');
    assert.deepEqual(e.spec.metricsCollectorSpec, { collector: { kind: 'StdOut' } });
    assert.equal(e.spec.parameters?.[0]?.feasibleSpace.distribution, 'uniform');
    const f = base();
    f.spec.metricsCollectorSpec = { collector: { kind: 'File' } };
    f.spec.trialTemplate!.trialSpec = { apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: {}, spec: {} };
    defaultExperiment(f);
    assert.deepEqual(f.spec.metricsCollectorSpec.source?.fileSystemPath, { kind: 'File', path: '/var/log/katib/metrics.log', format: 'TEXT' });
    assert.deepEqual(f.spec.trialTemplate?.primaryPodLabels, { 'training.kubeflow.org/job-role': 'master' });
    assert.equal(f.spec.trialTemplate?.successCondition, 'status.conditions.#(type=="Succeeded")#|#(status=="True")#');
  });

  it('refuses bad experiments naming the field', () => {
    const cases: [string, (e: Experiment) => void, string][] = [
      ['a name over 40 characters', (e) => { e.metadata.name = 'x'.repeat(41); }, 'metadata.name'],
      ['no objective metric', (e) => { delete e.spec.objective!.objectiveMetricName; }, 'spec.objective.objectiveMetricName'],
      ['an objective type Katib does not know', (e) => { (e.spec.objective as Record<string, unknown>).type = 'lower'; }, 'spec.objective.type'],
      ['the objective among the additional metrics', (e) => { e.spec.objective!.additionalMetricNames = ['loss']; }, 'spec.objective.additionalMetricNames'],
      ['parallel above max', (e) => { e.spec.parallelTrialCount = 9; }, 'spec.parallelTrialCount'],
      ['maxTrialCount 0', (e) => { e.spec.maxTrialCount = 0; }, 'spec.maxTrialCount'],
      ['an unknown algorithm', (e) => { e.spec.algorithm!.algorithmName = 'anneal'; }, 'spec.algorithm.algorithmName'],
      ['an unknown early stopping', (e) => { e.spec.earlyStopping = { algorithmName: 'asha-2' }; }, 'spec.earlyStopping.algorithmName'],
      ['a medianstop setting out of range', (e) => { e.spec.earlyStopping = { algorithmName: 'medianstop', algorithmSettings: [{ name: 'start_step', value: '0' }] }; }, 'spec.earlyStopping.algorithmSettings[0].value'],
      ['a double with a list', (e) => { e.spec.parameters![0]!.feasibleSpace.list = ['1']; }, 'spec.parameters[0].feasibleSpace.list'],
      ['a double with no max', (e) => { delete e.spec.parameters![0]!.feasibleSpace.max; }, 'spec.parameters[0].feasibleSpace.max'],
      ['min above max', (e) => { e.spec.parameters![0]!.feasibleSpace.min = '5'; }, 'spec.parameters[0].feasibleSpace.min'],
      ['a number that is not one', (e) => { e.spec.parameters![0]!.feasibleSpace.max = 'lots'; }, 'spec.parameters[0].feasibleSpace.max'],
      ['logUniform from 0', (e) => { e.spec.parameters![0]!.feasibleSpace.min = '0'; e.spec.parameters![0]!.feasibleSpace.distribution = 'logUniform'; }, 'spec.parameters[0].feasibleSpace.min'],
      ['a categorical with a min', (e) => { e.spec.parameters![1]!.feasibleSpace.min = '1'; }, 'spec.parameters[1].feasibleSpace'],
      ['a template referencing an unknown parameter', (e) => { e.spec.trialTemplate!.trialParameters![0]!.reference = 'learning_rate'; }, 'spec.trialTemplate.trialParameters[0].reference'],
      ['an assignment no trial parameter consumes', (e) => { e.spec.parameters!.push({ name: 'momentum', parameterType: 'double', feasibleSpace: { min: '0.1', max: '0.9' } }); }, 'spec.parameters[2].name'],
      ['a trial parameter the template never uses', (e) => { e.spec.trialTemplate!.trialParameters!.push({ name: 'unused', reference: '${trialSpec.Namespace}' }); }, 'spec.trialTemplate.trialParameters[3].name'],
      ['a placeholder no trial parameter declares', (e) => { (e.spec.trialTemplate!.trialSpec as KObject).spec.template.spec.containers[0].args = ['${trialParameters.batch}']; }, 'spec.trialTemplate.trialSpec'],
      ['a template that names its job', (e) => { (e.spec.trialTemplate!.trialSpec as KObject).metadata.name = 'fixed'; }, 'spec.trialTemplate.trialSpec.metadata'],
      ['no primary container', (e) => { delete e.spec.trialTemplate!.primaryContainerName; }, 'spec.trialTemplate.primaryContainerName'],
      ['both a trialSpec and a configMap', (e) => { e.spec.trialTemplate!.configMap = { configMapName: 'a', configMapNamespace: 'b', templatePath: 'c' }; }, 'spec.trialTemplate'],
      ['a File collector with a relative path', (e) => { e.spec.metricsCollectorSpec = { collector: { kind: 'File' }, source: { fileSystemPath: { path: 'metrics.log', kind: 'File', format: 'TEXT' } } }; }, 'spec.metricsCollectorSpec.source.fileSystemPath.path'],
      ['a JSON file with a filter', (e) => { e.spec.metricsCollectorSpec = { collector: { kind: 'File' }, source: { fileSystemPath: { path: '/m.json', kind: 'File', format: 'JSON' }, filter: { metricsFormat: ['(a)(b)'] } } }; }, 'spec.metricsCollectorSpec.source.filter'],
      ['a filter with one group', (e) => { e.spec.metricsCollectorSpec = { collector: { kind: 'StdOut' }, source: { filter: { metricsFormat: ['loss=(.*)'] } } }; }, 'spec.metricsCollectorSpec.source.filter.metricsFormat[0]'],
      ['an unknown collector', (e) => { e.spec.metricsCollectorSpec = { collector: { kind: 'Sidecar' as never } }; }, 'spec.metricsCollectorSpec.collector.kind'],
      ['an additional objective not among the metrics', (e) => { e.spec.objective!.additionalObjectives = [{ name: 'latency', type: 'minimize' }]; }, 'spec.objective.additionalObjectives[0].name'],
    ];
    assert.deepEqual(check(base()), []);
    for (const [what, change, field] of cases) {
      const e = base();
      change(e);
      const errs = check(e);
      assert.ok(fields(errs).includes(field), `${what}: expected ${field} in ${JSON.stringify(errs)}`);
    }
  });

  it('lets only the three counts change, and a finished experiment restart only by raising maxTrialCount under LongRunning', () => {
    const old = base();
    defaultExperiment(old);
    const stored = { ...old, status: { trials: 6, conditions: [{ type: 'Succeeded', status: 'True' as const, reason: 'ExperimentMaxTrialsReached' }] } };
    const raise = clone(old);
    raise.spec.maxTrialCount = 10;
    assert.ok(fields(check(raise, stored)).includes('spec.resumePolicy'), 'resumePolicy Never cannot restart');
    stored.spec.resumePolicy = 'LongRunning';
    raise.spec.resumePolicy = 'LongRunning';
    assert.deepEqual(check(raise, stored), []);
    const same = clone(raise);
    same.spec.maxTrialCount = 5;
    assert.ok(fields(check(same, stored)).includes('spec.maxTrialCount'));
    const other = clone(raise);
    other.spec.algorithm = { algorithmName: 'tpe' };
    assert.ok(fields(check(other, stored)).includes('spec'));
  });
});

describe('Katib trial template substitution', () => {
  it('replaces each placeholder by its assignment or the trial\'s metadata, and names the job as the trial', () => {
    const e = base();
    const t = e.spec.trialTemplate!;
    const job = renderTrialJob(t, JSON.stringify(t.trialSpec), JSON.parse, 'ex-abc12345', 'team-a', [{ name: 'lr', value: '0.05' }, { name: 'opt', value: 'adam "v2"' }]);
    assert.equal(job.metadata.name, 'ex-abc12345');
    assert.equal(job.metadata.namespace, 'team-a');
    assert.deepEqual(job.metadata.labels, { team: 'a' });
    assert.deepEqual(job.spec.template.spec.containers[0].command.slice(3), ['--lr=0.05', '--opt=adam "v2"', '--name=ex-abc12345']);
  });

  it('reads a configMap\'s YAML text', () => {
    const t = { primaryContainerName: 'main', trialParameters: [{ name: 'lr', reference: 'lr' }], configMap: { configMapName: 'c', configMapNamespace: 'n', templatePath: 'p' } };
    const text = 'apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec:\n      containers:\n        - name: main\n          args: ["--lr=${trialParameters.lr}"]\n';
    const job = renderTrialJob(t, text, (s) => YAML.parse(s), 't1', 'ns', [{ name: 'lr', value: '0.1' }]);
    assert.deepEqual(job.spec.template.spec.containers[0].args, ['--lr=0.1']);
  });

  it('refuses an assignment the template cannot take', () => {
    const t = base().spec.trialTemplate!;
    assert.throws(() => renderTrialJob(t, JSON.stringify(t.trialSpec), JSON.parse, 't', 'ns', [{ name: 'lr', value: '1' }]), TemplateError);
    assert.throws(() => renderTrialJob(t, JSON.stringify(t.trialSpec), JSON.parse, 't', 'ns', [{ name: 'lr', value: '1' }, { name: 'opt', value: 'a' }, { name: 'extra', value: 'b' }]), TemplateError);
  });
});
