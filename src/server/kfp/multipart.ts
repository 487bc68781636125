// multipart/form-data bodies (pipeline uploads) and the packages they carry: a YAML or JSON file,
// or a .tar.gz / .zip holding one.
import { findInArchive, sniffArchive } from '../../artifacts/archive.js';

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

/**
 * The pipeline text of an uploaded package: the file itself, or the first .yaml/.yml/.json file
 * inside a .tar.gz/.tgz or .zip (recognised by content, not name).
 */
export async function packageText(data: Buffer, filename = ''): Promise<{ name: string; text: string }> {
  const format = sniffArchive(data);
  if (format === undefined) return { name: filename, text: data.toString('utf8') };
  let f: { path: string; data: Buffer } | undefined;
  try {
    f = await findInArchive(data, format, pipelineFile);
  } catch (e) {
    throw new Error(`${filename}: ${(e as Error).message}`);
  }
  if (!f) throw new Error(`${filename}: the ${format === 'zip' ? 'zip' : 'archive'} holds no .yaml, .yml or .json pipeline file`);
  return { name: f.path, text: f.data.toString('utf8') };
}
