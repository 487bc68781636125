import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TfEventError, crc32c, readRecords, readScalarEvents, tagMatches, tfEventMetrics } from './tfevent.js';
import { encodeEvent, fileVersionEvent, tfRecords } from './testing.js';

describe('TFRecord', () => {
  it('CRC-32C of the standard check string', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc32c(Buffer.alloc(32)), 0x8a9136aa);
  });
  it('reads whole records, stops at a cut-off one, rejects a bad checksum', () => {
    const file = tfRecords([Buffer.from('a'), Buffer.from('bcd')]);
    // 8 length + 4 crc + data + 4 crc per record
    assert.equal(file.length, 16 + 1 + 16 + 3);
    assert.deepEqual(readRecords(file).map((b) => b.toString()), ['a', 'bcd']);
    assert.deepEqual(readRecords(file.subarray(0, file.length - 2)).map((b) => b.toString()), ['a']);
    const bad = Buffer.from(file);
    bad[12] = 'z'.charCodeAt(0);
    assert.throws(() => readRecords(bad), (e: unknown) => e instanceof TfEventError && /data checksum mismatch at byte 0/.test(e.message));
  });
});

describe('event files', () => {
  const file = tfRecords([
    fileVersionEvent(1700000000),
    encodeEvent(1700000001.5, 1, [{ tag: 'accuracy', simple: 0.5 }, { tag: 'loss', simple: 2 }]),
    encodeEvent(1700000002, 2, [{ tag: 'accuracy', tensorFloat: 0.75 }]),
    encodeEvent(1700000003, 3, [{ tag: 'accuracy_top5', tensorDouble: 0.875 }]),
  ]);
  it('decodes simple values and scalar tensors with their step and wall time', () => {
    assert.deepEqual(readScalarEvents(file), [
      { wallTime: 1700000001.5, step: 1, tag: 'accuracy', value: 0.5 },
      { wallTime: 1700000001.5, step: 1, tag: 'loss', value: 2 },
      { wallTime: 1700000002, step: 2, tag: 'accuracy', value: 0.75 },
      { wallTime: 1700000003, step: 3, tag: 'accuracy_top5', value: 0.875 },
    ]);
  });
  it("Katib's tag rule: prefix of the name's last part, directory suffix when the name has one", () => {
    assert.equal(tagMatches('accuracy_1', 'accuracy', '/log/train/events.out'), true);
    assert.equal(tagMatches('accuracy', 'train/accuracy', '/log/train/events.out'), true);
    assert.equal(tagMatches('accuracy', 'test/accuracy', '/log/train/events.out'), false);
    assert.equal(tagMatches('loss', 'accuracy', '/log/train/events.out'), false);
  });
  it('metric logs from a directory of files; files that are not event files are passed over', () => {
    const logs = tfEventMetrics([
      { path: '/log/train/events.out.tfevents.1', data: file },
      { path: '/log/test/events.out.tfevents.2', data: tfRecords([encodeEvent(1700000004, 1, [{ tag: 'accuracy', simple: 0.25 }])]) },
      { path: '/log/notes.txt', data: Buffer.from('hello, not a record file at all') },
    ], ['train/accuracy', 'loss']);
    assert.deepEqual(logs.map((l) => [l.name, l.value, l.timeStamp]), [
      ['train/accuracy', '0.5', '2023-11-14T22:13:21.5Z'],
      ['train/accuracy', '0.75', '2023-11-14T22:13:22Z'],
      ['train/accuracy', '0.875', '2023-11-14T22:13:23Z'],
      ['loss', '2', '2023-11-14T22:13:21.5Z'],
    ]);
  });
});
