// ASHA's verdict: judged at the highest rung reached, against every trial that reached it; kept only
// in the top 1/reduction_factor; nobody stopped before min_trials_required trials reached the rung.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ashaVerdict } from './asha.js';

const settings = [{ name: 'min_resource', value: '1' }, { name: 'reduction_factor', value: '3' }, { name: 'min_trials_required', value: '3' }];

describe('ASHA', () => {
  it('stops a trial outside the top third of its rung, keeps one inside', () => {
    const others = [[0.9], [0.5, 0.4, 0.3], [0.6, 0.2], [0.7], [0.8]];
    // rung 0 (1 report): six trials reached it, the top 2 go on: 0.5 and 0.6
    assert.equal(ashaVerdict([0.55], others, 'minimize', settings), undefined);
    assert.match(ashaVerdict([0.75], others, 'minimize', settings) ?? '', /top 2 of the 6 trials/);
    // rung 1 (3 reports): the trial is judged there, against those with 3 reports (one other)
    assert.equal(ashaVerdict([0.9, 0.9, 0.9], others, 'minimize', settings), undefined, 'too few reached rung 1 to judge');
    const more = [...others, [0.5, 0.3, 0.25], [0.4, 0.35, 0.33]];
    assert.match(ashaVerdict([0.9, 0.9, 0.9], more, 'minimize', settings) ?? '', /by report 3/);
  });

  it('keeps the best when maximising, judges by the best so far, and waits for min_trials_required', () => {
    assert.equal(ashaVerdict([0.1, 0.95, 0.2], [[0.5, 0.6, 0.7], [0.4, 0.5, 0.6]], 'maximize', settings), undefined);
    assert.match(ashaVerdict([0.1, 0.2, 0.3], [[0.5, 0.6, 0.7], [0.4, 0.5, 0.6]], 'maximize', settings) ?? '', /not among the top 1 of the 3/);
    assert.equal(ashaVerdict([0.1], [[0.5]], 'maximize', settings), undefined);
    assert.equal(ashaVerdict([], [[0.5], [0.6], [0.7]], 'maximize', settings), undefined, 'no report, no rung');
  });
});
