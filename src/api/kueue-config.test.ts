// Kueue's Configuration: v1beta2 defaults, v1beta1 converted as Kueue converts it, Kueue's start-up checks.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { conformanceDir, corpusFiles } from '../conformance-path.js';
import { kueueConfiguration } from './kueue-config.js';

const v1beta2 = (body: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'config.kueue.x-k8s.io/v1beta2', kind: 'Configuration', ...body });
const v1beta1 = (body: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'config.kueue.x-k8s.io/v1beta1', kind: 'Configuration', ...body });

describe('Kueue\'s Configuration', () => {
  it('fills v1beta2\'s defaults: waitForPodsReady on (30m, no blocking), batch/job, jobs outside kube-system and Kueue\'s namespace', () => {
    const { config, errors } = kueueConfiguration(v1beta2({}));
    assert.deepEqual(errors, []);
    assert.deepEqual(config.waitForPodsReady, { timeout: '30m', blockAdmission: false, recoveryTimeout: '30m', requeuingStrategy: { timestamp: 'Eviction', backoffBaseSeconds: 60, backoffMaxSeconds: 3600 } });
    assert.deepEqual(config.integrations, { frameworks: ['batch/job'] });
    assert.equal(config.manageJobsWithoutQueueName, false);
    assert.deepEqual(config.managedJobsNamespaceSelector, { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kueue-system'] }] });
    assert.equal(config.fairSharing, undefined);
  });

  it('converts v1beta1: enable flags dropped, a disabled section gone, fair sharing\'s default strategies, v1beta1\'s blocking default', () => {
    const off = kueueConfiguration(v1beta1({ waitForPodsReady: { enable: false, timeout: '10m' }, fairSharing: { enable: false } })).config;
    assert.equal(off.waitForPodsReady, undefined);
    assert.equal(off.fairSharing, undefined);
    const on = kueueConfiguration(v1beta1({ waitForPodsReady: { enable: true }, fairSharing: { enable: true } })).config;
    assert.equal(on.apiVersion, 'config.kueue.x-k8s.io/v1beta2');
    assert.deepEqual(on.fairSharing, { preemptionStrategies: ['LessThanOrEqualToFinalShare', 'LessThanInitialShare'] });
    assert.deepEqual([on.waitForPodsReady?.timeout, on.waitForPodsReady?.blockAdmission, on.waitForPodsReady?.recoveryTimeout], ['5m', true, '5m']);
    const kept = kueueConfiguration(v1beta1({ waitForPodsReady: { enable: true, timeout: '10m', blockAdmission: false, requeuingStrategy: { backoffLimitCount: 5 } } })).config;
    assert.deepEqual(kept.waitForPodsReady, { timeout: '10m', blockAdmission: false, recoveryTimeout: '10m', requeuingStrategy: { backoffLimitCount: 5, timestamp: 'Eviction', backoffBaseSeconds: 60, backoffMaxSeconds: 3600 } });
  });

  it('refuses what Kueue refuses at start-up, naming the field', () => {
    const fields = (doc: Record<string, unknown>): string[] => kueueConfiguration(doc).errors.map((e) => `${e.field}: ${e.message}`);
    assert.match(fields(v1beta2({ fairSharing: { preemptionStrategies: ['LessThanInitialShare', 'LessThanOrEqualToFinalShare'] } }))[0] ?? '', /^fairSharing\.preemptionStrategies: Unsupported value/);
    assert.deepEqual(fields(v1beta2({ fairSharing: { preemptionStrategies: [] } })), ['fairSharing.preemptionStrategies: Required value: must be specified']);
    // recoveryTimeout defaults to the timeout, and is refused with it
    assert.deepEqual(fields(v1beta2({ waitForPodsReady: { timeout: '-5m' } })), [
      'waitForPodsReady.timeout: Invalid value: "-5m": must be greater than or equal to 0',
      'waitForPodsReady.recoveryTimeout: Invalid value: "-5m": must be greater than or equal to 0',
    ]);
    assert.deepEqual(fields(v1beta2({ waitForPodsReady: { timeout: '5m', requeuingStrategy: { timestamp: 'Now', backoffLimitCount: -1 } } })), [
      'waitForPodsReady.requeuingStrategy.timestamp: Unsupported value: "Now": supported values: "Creation", "Eviction"',
      'waitForPodsReady.requeuingStrategy.backoffLimitCount: Invalid value: -1: must be greater than or equal to 0',
    ]);
    assert.deepEqual(fields(v1beta2({ resources: { transformations: [{ input: 'nvidia.com/gpu', strategy: 'Keep' }, { input: 'nvidia.com/gpu' }] } })), [
      'resources.transformations[0].strategy: Unsupported value: "Keep": supported values: "Retain", "Replace"',
      'resources.transformations[1].input: Duplicate value: "nvidia.com/gpu"',
    ]);
    assert.deepEqual(fields({ apiVersion: 'config.kueue.x-k8s.io/v1alpha1', kind: 'Configuration' }), ['apiVersion: Unsupported value: "config.kueue.x-k8s.io/v1alpha1": supported values: "config.kueue.x-k8s.io/v1beta2", "config.kueue.x-k8s.io/v1beta1"']);
  });

  it('accepts every Configuration of Kueue\'s docs', () => {
    let n = 0;
    for (const file of corpusFiles(join(conformanceDir(), 'kueue', 'docs-extracted'))) {
      // upstream's typo (`- input: example.com/gpu-type1:`): not YAML to Kueue's parser (see the corpus's SOURCE.md)
      if (file.endsWith('tasks_manage_administer_cluster_quotas-13.yaml')) continue;
      let docs: unknown[];
      try {
        docs = YAML.parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJSON() as unknown);
      } catch {
        continue;
      }
      for (const d of docs) {
        if ((d as { kind?: string } | null)?.kind !== 'Configuration') continue;
        const { config, errors } = kueueConfiguration(d);
        assert.deepEqual(errors, [], file);
        if (config.resources?.transformations) assert.ok(config.resources.transformations.every((t) => t.strategy === 'Replace'), file);
        n++;
      }
    }
    assert.ok(n >= 4, `${n} configurations`);
  });
});
