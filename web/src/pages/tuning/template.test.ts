import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { TuningExperiment as Experiment } from '../../api/types';
import { exampleExperiment } from './template';

describe('the New experiment template', () => {
  it('is an Experiment in the namespace whose every parameter a trial parameter consumes, and whose job prints the metric', () => {
    const e = parse(exampleExperiment('team-a')) as Experiment;
    expect([e.apiVersion, e.kind, e.metadata.namespace]).toEqual(['kubeflow.org/v1beta1', 'Experiment', 'team-a']);
    expect(e.metadata.name!.length).toBeLessThanOrEqual(40);
    const params = (e.spec.parameters ?? []).map((p) => p.name);
    const refs = (e.spec.trialTemplate?.trialParameters ?? []).map((p) => p.reference);
    expect(refs.sort()).toEqual(params.sort());
    const spec = JSON.stringify(e.spec.trialTemplate?.trialSpec);
    for (const tp of e.spec.trialTemplate?.trialParameters ?? []) expect(spec).toContain(`\${trialParameters.${tp.name}}`);
    expect(spec).toContain(`${e.spec.objective?.objectiveMetricName}=`);
    const container = (e.spec.trialTemplate?.trialSpec?.spec as { template: { spec: { containers: { name: string }[] } } }).template.spec.containers[0];
    expect(container?.name).toBe(e.spec.trialTemplate?.primaryContainerName);
  });
});
