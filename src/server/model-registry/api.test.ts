import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchRegistryPath } from './api.js';

describe('the registry\'s paths', () => {
  it('are upstream\'s under either version prefix, with or without a namespace before them', () => {
    assert.deepEqual(matchRegistryPath('/api/model_registry/v1alpha3/registered_models'), { path: '/api/model_registry/v1alpha3/registered_models' });
    assert.deepEqual(matchRegistryPath('/api/model_registry/v1/model_versions/3'), { path: '/api/model_registry/v1/model_versions/3' });
    assert.deepEqual(matchRegistryPath('/model-registry/team-a/api/model_registry/v1/registered_models'), { namespace: 'team-a', path: '/api/model_registry/v1/registered_models' });
    for (const other of ['/api/v1/pods', '/api/model_registry/v2/x', '/api/model_registry/v1alpha30', '/model-registry/Team_A/api/model_registry/v1/x', '/model-registry/team-a/other']) {
      assert.equal(matchRegistryPath(other), undefined, other);
    }
  });
});
