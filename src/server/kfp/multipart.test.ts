import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deflateRawSync, gzipSync } from 'node:zlib';
import { packageText, parseMultipart } from './multipart.js';

function tar(name: string, body: string): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0);
  header.write('0000644\0', 100);
  header.write(Buffer.byteLength(body).toString(8).padStart(11, '0') + '\0', 124);
  header.write('0', 156);
  const data = Buffer.alloc(Math.ceil(Buffer.byteLength(body) / 512) * 512);
  data.write(body);
  return Buffer.concat([header, data, Buffer.alloc(1024)]);
}

function zip(name: string, body: string): Buffer {
  const data = deflateRawSync(Buffer.from(body));
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(8, 8);
  h.writeUInt32LE(data.length, 18);
  h.writeUInt32LE(Buffer.byteLength(body), 22);
  h.writeUInt16LE(Buffer.byteLength(name), 26);
  return Buffer.concat([h, Buffer.from(name), data]);
}

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

  it('finds the pipeline file in a .tar.gz or .zip package, or takes the file itself', () => {
    assert.deepEqual(packageText(gzipSync(tar('pkg/pipeline.yaml', 'a: 1\n')), 'p.tgz'), { name: 'pkg/pipeline.yaml', text: 'a: 1\n' });
    assert.deepEqual(packageText(zip('pipeline.json', '{"a": 1}'), 'p.zip'), { name: 'pipeline.json', text: '{"a": 1}' });
    assert.deepEqual(packageText(Buffer.from('a: 1'), 'p.yaml'), { name: 'p.yaml', text: 'a: 1' });
    assert.throws(() => packageText(gzipSync(tar('readme.txt', 'hi')), 'p.tgz'), /no \.yaml, \.yml or \.json/);
  });
});
