import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { containerArgv } from './env.js';

describe('containerArgv', () => {
  it('puts the command before the args, expanding $(VAR)', () => {
    assert.deepEqual(containerArgv({ name: 'c', command: ['sh', '-c'], args: ['echo $(X)'] }, { X: 'hi' }), ['sh', '-c', 'echo hi']);
  });

  it("uses the image's entrypoint when the container names no command", () => {
    assert.deepEqual(containerArgv({ name: 'c', args: ['--port', '8080'] }, {}, ['server']), ['server', '--port', '8080']);
  });

  it('runs the args themselves when neither the container nor the image names a command', () => {
    assert.deepEqual(containerArgv({ name: 'c', image: 'python:3.11', args: ['python3', '-m', 'http.server', '$(PORT)'] }, { PORT: '8000' }), ['python3', '-m', 'http.server', '8000']);
  });

  it('refuses a container with nothing to run', () => {
    assert.throws(() => containerArgv({ name: 'c', image: 'python:3.11' }, {}), /container "c" has no command, and image "python:3.11" names an environment without an entrypoint/);
  });
});
