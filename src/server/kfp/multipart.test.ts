import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { makeTar, makeZip } from '../../artifacts/testing.js';
import { packageText, parseMultipart } from './multipart.js';

describe('pipeline uploads', () => {
  it('splits a multipart body into named parts', () => {
    const body = Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="uploadfile"; filename="p.yaml"\r\nContent-Type: application/octet-stream\r\n\r\npipelineInfo:\r\n  name: a\r\n--XyZ\r\nContent-Disposition: form-data; name="other"\r\n\r\nv\r\n--XyZ--\r\n');
    const parts = parseMultipart(body, 'multipart/form-data; boundary=XyZ');
    assert.equal(parts.length, 2);
    assert.equal(parts[0]?.name, 'uploadfile');
    assert.equal(parts[0]?.filename, 'p.yaml');
    assert.equal(parts[0]?.data.toString(), 'pipelineInfo:\r\n  name: a');
    assert.equal(parts[1]?.data.toString(), 'v');
    assert.throws(() => parseMultipart(body, 'application/json'), /multipart\/form-data/);
    assert.throws(() => parseMultipart(Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nno end'), 'multipart/form-data; boundary=XyZ'), /not terminated/);
  });

  it('finds the pipeline file in a .tar.gz or .zip package, or takes the file itself', async () => {
    assert.deepEqual(await packageText(makeTar([{ name: 'pkg/' }, { name: 'pkg/.hidden.yaml', body: 'no' }, { name: 'pkg/pipeline.yaml', body: 'a: 1\n' }], true), 'p.tgz'), { name: 'pkg/pipeline.yaml', text: 'a: 1\n' });
    assert.deepEqual(await packageText(makeZip([{ name: 'readme.md', body: 'x' }, { name: 'pipeline.json', body: '{"a": 1}' }]), 'p.zip'), { name: 'pipeline.json', text: '{"a": 1}' });
    assert.deepEqual(await packageText(Buffer.from('a: 1'), 'p.yaml'), { name: 'p.yaml', text: 'a: 1' });
    await assert.rejects(packageText(makeTar([{ name: 'readme.txt', body: 'hi' }], true), 'p.tgz'), /p\.tgz: the archive holds no \.yaml, \.yml or \.json/);
    await assert.rejects(packageText(makeZip([{ name: '../pipeline.yaml', body: 'a: 1' }]), 'p.zip'), /p\.zip: .*pipeline\.yaml/);
  });
});
