import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GjsonSyntaxError, gjsonGet, gjsonMatch } from './gjson.js';

// Katib's defaults (experiments/v1beta1/constants.go), as a defaulted Trial carries them
const jobSuccess = 'status.conditions.#(type=="Complete")#|#(status=="True")#';
const jobFailure = 'status.conditions.#(type=="Failed")#|#(status=="True")#';
const kfSuccess = 'status.conditions.#(type=="Succeeded")#|#(status=="True")#';
const kfFailure = 'status.conditions.#(type=="Failed")#|#(status=="True")#';

const cond = (type: string, status: string, reason?: string, message?: string): Record<string, string> => ({ type, status, ...(reason ? { reason } : {}), ...(message ? { message } : {}) });

describe('gjson: Katib default conditions', () => {
  it('batch Job: Complete=True succeeds, Failed=True fails, neither while running', () => {
    const done = { status: { conditions: [cond('SuccessCriteriaMet', 'True'), cond('Complete', 'True', 'Done', 'all pods ok')] } };
    assert.deepEqual(gjsonMatch(done, jobSuccess), { matched: true, reason: 'Done', message: 'all pods ok' });
    assert.deepEqual(gjsonMatch(done, jobFailure), { matched: false });
    const failed = { status: { conditions: [cond('FailureTarget', 'True'), cond('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit')] } };
    assert.deepEqual(gjsonMatch(failed, jobFailure), { matched: true, reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' });
    assert.equal(gjsonMatch(failed, jobSuccess).matched, false);
    assert.equal(gjsonMatch({ status: { active: 1 } }, jobSuccess).matched, false);
    assert.equal(gjsonMatch({ metadata: { name: 'x' } }, jobFailure).matched, false);
  });

  it('training job: Succeeded=True, Failed=True; a False condition is no match', () => {
    const running = { status: { conditions: [cond('Created', 'True'), cond('Running', 'True'), cond('Succeeded', 'False')] } };
    assert.equal(gjsonMatch(running, kfSuccess).matched, false);
    const ok = { status: { conditions: [cond('Created', 'True'), cond('Running', 'False'), cond('Succeeded', 'True', 'PyTorchJobSucceeded', 'PyTorchJob x is successfully completed.')] } };
    assert.deepEqual(gjsonMatch(ok, kfSuccess), { matched: true, reason: 'PyTorchJobSucceeded', message: 'PyTorchJob x is successfully completed.' });
    const bad = { status: { conditions: [cond('Running', 'False'), cond('Failed', 'True', 'PyTorchJobFailed')] } };
    assert.deepEqual(gjsonMatch(bad, kfFailure), { matched: true, reason: 'PyTorchJobFailed' });
  });

  it("pipeline Run: its Succeeded condition, or a query on its state", () => {
    const run = { status: { state: 'SUCCEEDED', conditions: [cond('Succeeded', 'True', 'Succeeded')] } };
    assert.equal(gjsonMatch(run, kfSuccess).matched, true);
    assert.equal(gjsonMatch(run, kfFailure).matched, false);
    // a bare string is no match, as in Katib (only objects and non-empty arrays are)
    assert.equal(gjsonMatch(run, 'status.state').matched, false);
    assert.equal(gjsonMatch({ list: [run] }, 'list.#(status.state=="SUCCEEDED")').matched, true);
    assert.equal(gjsonMatch({ list: [run] }, 'list.#(status.state=="FAILED")').matched, false);
  });
});

describe('gjson: paths', () => {
  const doc = {
    name: { first: 'Tom', last: 'Anderson' },
    age: 37,
    'fav.movie': 'Deer Hunter',
    children: ['Sara', 'Alex', 'Jack'],
    friends: [
      { first: 'Dale', last: 'Murphy', age: 44, nets: ['ig', 'fb', 'tw'] },
      { first: 'Roger', last: 'Craig', age: 68, nets: ['fb', 'tw'] },
      { first: 'Jane', last: 'Murphy', age: 47, nets: ['ig', 'tw'] },
    ],
  };
  it('keys, indices, escapes and wildcards', () => {
    assert.equal(gjsonGet(doc, 'name.last'), 'Anderson');
    assert.equal(gjsonGet(doc, 'children.1'), 'Alex');
    assert.equal(gjsonGet(doc, 'friends.1.first'), 'Roger');
    assert.equal(gjsonGet(doc, 'fav\\.movie'), 'Deer Hunter');
    assert.equal(gjsonGet(doc, 'child*.2'), 'Jack');
    assert.equal(gjsonGet(doc, 'c?ildren.0'), 'Sara');
    assert.equal(gjsonGet(doc, 'name.middle'), undefined);
    assert.equal(gjsonGet(doc, 'age.x'), undefined);
  });
  it('# is the length, or maps the rest of the path', () => {
    assert.equal(gjsonGet(doc, 'children.#'), 3);
    assert.deepEqual(gjsonGet(doc, 'friends.#.first'), ['Dale', 'Roger', 'Jane']);
    assert.deepEqual(gjsonGet(doc, 'friends.#.nets.#'), [3, 2, 2]);
    assert.equal(gjsonGet(doc, 'friends.#.first|#'), 3);
    assert.equal(gjsonGet(doc, 'name.#'), undefined);
  });
  it('queries: first match, all matches, comparisons, wildcard match, nested', () => {
    assert.deepEqual(gjsonGet(doc, 'friends.#(last=="Murphy").first'), 'Dale');
    assert.deepEqual(gjsonGet(doc, 'friends.#(last=="Murphy")#.first'), ['Dale', 'Jane']);
    assert.deepEqual(gjsonGet(doc, 'friends.#(age>45)#.last'), ['Craig', 'Murphy']);
    assert.deepEqual(gjsonGet(doc, 'friends.#(age<=44)#.first'), ['Dale']);
    assert.deepEqual(gjsonGet(doc, 'friends.#(age!=68)#.first'), ['Dale', 'Jane']);
    assert.deepEqual(gjsonGet(doc, 'friends.#(first%"D*").last'), 'Murphy');
    assert.deepEqual(gjsonGet(doc, 'friends.#(first!%"D*")#.first'), ['Roger', 'Jane']);
    assert.deepEqual(gjsonGet(doc, 'friends.#(nets.#(=="fb"))#.first'), ['Dale', 'Roger']);
    assert.deepEqual(gjsonGet(doc, 'friends.#(last=="Murphy")#|#(age>45)#|0.first'), 'Jane');
    assert.deepEqual(gjsonGet(doc, 'friends.#(last=="Nobody")#'), []);
    assert.equal(gjsonGet(doc, 'friends.#(last=="Nobody")'), undefined);
    // a number never equals a string
    assert.deepEqual(gjsonGet(doc, 'friends.#(age=="44")#'), []);
  });
  it('a match needs an object or a non-empty array', () => {
    assert.equal(gjsonMatch(doc, 'name').matched, true);
    assert.equal(gjsonMatch(doc, 'children').matched, true);
    assert.equal(gjsonMatch(doc, 'age').matched, false);
    assert.equal(gjsonMatch(doc, 'friends.#(last=="Nobody")#').matched, false);
    assert.equal(gjsonMatch(doc, '').matched, false);
  });
  it('bad conditions name what is wrong', () => {
    assert.throws(() => gjsonGet(doc, 'friends.#(last=="Murphy"'), (e: unknown) => e instanceof GjsonSyntaxError && /no closing/.test(e.message));
    assert.throws(() => gjsonGet(doc, 'friends.#(last==Murphy)'), (e: unknown) => e instanceof GjsonSyntaxError && /Murphy/.test(e.message));
    assert.throws(() => gjsonGet(doc, 'name.'), GjsonSyntaxError);
  });
});
