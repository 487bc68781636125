// multipart/form-data bodies (pipeline uploads) and the packages they carry: a YAML or JSON file,
// or a .tar.gz / .zip holding one.
import { gunzipSync, inflateRawSync } from 'node:zlib';

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** Splits a multipart/form-data body; throws an Error saying what is malformed. */
export function parseMultipart(body: Buffer, contentType: string | undefined): Part[] {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  if (!m || !/multipart\/form-data/i.test(contentType ?? '')) throw new Error('the request must be multipart/form-data with a boundary');
  const boundary = Buffer.from(`--${m[1] ?? m[2]}`);
  const parts: Part[] = [];
  let pos = body.indexOf(boundary);
  if (pos < 0) throw new Error('the multipart body has no boundary line');
  for (;;) {
    pos += boundary.length;
    if (body.subarray(pos, pos + 2).toString() === '--') break;
    if (body.subarray(pos, pos + 2).toString() === '\r\n') pos += 2;
    const headEnd = body.indexOf('\r\n\r\n', pos);
    if (headEnd < 0) throw new Error('a multipart part has no header end');
    const headers = body.subarray(pos, headEnd).toString('utf8').split('\r\n');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), boundary]), headEnd + 4);
    if (next < 0) throw new Error('the multipart body is not terminated');
    const part: Part = { name: '', data: body.subarray(headEnd + 4, next) };
    for (const h of headers) {
      const [k = '', ...rest] = h.split(':');
      const v = rest.join(':').trim();
      if (k.toLowerCase() === 'content-disposition') {
        part.name = /\bname="([^"]*)"/i.exec(v)?.[1] ?? '';
        const fn = /\bfilename="([^"]*)"/i.exec(v)?.[1];
        if (fn !== undefined) part.filename = fn;
      } else if (k.toLowerCase() === 'content-type') part.contentType = v;
    }
    parts.push(part);
    pos = next + 2;
  }
  return parts;
}

const pipelineFile = (name: string): boolean => /\.(ya?ml|json)$/i.test(name) && !name.split('/').some((s) => s.startsWith('.'));

function fromTar(tar: Buffer): { name: string; text: string } | undefined {
  let pos = 0;
  while (pos + 512 <= tar.length) {
    const header = tar.subarray(pos, pos + 512);
    if (header.every((b) => b === 0)) break;
    const name = header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    const prefix = header.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(header.subarray(124, 136).toString('utf8').replace(/\0.*$/s, '').trim() || '0', 8);
    const type = String.fromCharCode(header[156] ?? 0);
    const full = prefix ? `${prefix}/${name}` : name;
    const start = pos + 512;
    if ((type === '0' || type === '\0') && pipelineFile(full)) return { name: full, text: tar.subarray(start, start + size).toString('utf8') };
    pos = start + Math.ceil(size / 512) * 512;
  }
  return undefined;
}

function fromZip(zip: Buffer): { name: string; text: string } | undefined {
  let pos = 0;
  while (pos + 30 <= zip.length && zip.readUInt32LE(pos) === 0x04034b50) {
    const flags = zip.readUInt16LE(pos + 6);
    const method = zip.readUInt16LE(pos + 8);
    let size = zip.readUInt32LE(pos + 18);
    const nameLen = zip.readUInt16LE(pos + 26);
    const extraLen = zip.readUInt16LE(pos + 28);
    const name = zip.subarray(pos + 30, pos + 30 + nameLen).toString('utf8');
    const start = pos + 30 + nameLen + extraLen;
    if (flags & 0x08) {
      // sizes follow the data: read them from the central directory entry
      const cd = zip.indexOf(Buffer.concat([Buffer.from([0x50, 0x4b, 0x01, 0x02])]));
      for (let c = cd; c >= 0 && c + 46 <= zip.length && zip.readUInt32LE(c) === 0x02014b50;) {
        const n = zip.subarray(c + 46, c + 46 + zip.readUInt16LE(c + 28)).toString('utf8');
        if (n === name) {
          size = zip.readUInt32LE(c + 20);
          break;
        }
        c += 46 + zip.readUInt16LE(c + 28) + zip.readUInt16LE(c + 30) + zip.readUInt16LE(c + 32);
      }
    }
    const data = zip.subarray(start, start + size);
    if (pipelineFile(name)) {
      if (method === 0) return { name, text: data.toString('utf8') };
      if (method === 8) return { name, text: inflateRawSync(data).toString('utf8') };
      throw new Error(`${name}: zip compression method ${method} is not supported (use deflate or store)`);
    }
    pos = start + size + (flags & 0x08 ? 16 : 0);
  }
  return undefined;
}

/**
 * The pipeline text of an uploaded package: the file itself, or the first .yaml/.yml/.json file
 * inside a .tar.gz/.tgz or .zip (recognised by content, not name).
 */
export function packageText(data: Buffer, filename = ''): { name: string; text: string } {
  if (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b) {
    let tar: Buffer;
    try {
      tar = gunzipSync(data);
    } catch (e) {
      throw new Error(`${filename}: not a valid gzip file: ${(e as Error).message}`);
    }
    const f = fromTar(tar);
    if (!f) throw new Error(`${filename}: the archive holds no .yaml, .yml or .json pipeline file`);
    return f;
  }
  if (data.length >= 4 && data.readUInt32LE(0) === 0x04034b50) {
    const f = fromZip(data);
    if (!f) throw new Error(`${filename}: the zip holds no .yaml, .yml or .json pipeline file`);
    return f;
  }
  return { name: filename, text: data.toString('utf8') };
}
