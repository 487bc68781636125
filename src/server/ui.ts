// The dashboard's files (web/, built by the setup script into build/web) at /ui/. Every path under /ui/
// that is not a file is a page of the single-page app and gets index.html; `/` sends browsers there,
// keeping a KFP-style fragment (`/#/runs/details/<id>`) for the app to resolve. So does `/pipeline/`,
// where Kubeflow's dashboard serves KFP's UI: kfp.Client() in a notebook, given no host, prints links
// relative to it (`/pipeline/#/runs/details/<id>`).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const UI_PREFIX = '/ui';
/** where Kubeflow's dashboard serves KFP's UI, and so where in-cluster kfp.Client() links point */
export const KFP_UI_PREFIX = '/pipeline';

/** where `vite build` writes the dashboard (scripts/setup.sh) */
export const defaultUiRoot = fileURLToPath(new URL('../../../build/web', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

export class UiFiles {
  constructor(private readonly root: string = defaultUiRoot) {}

  /** answers `/` and everything under /ui; false for other paths */
  handles(path: string): boolean {
    return path === '/' || path === UI_PREFIX || path.startsWith(`${UI_PREFIX}/`) || path === KFP_UI_PREFIX || path === `${KFP_UI_PREFIX}/`;
  }

  async handle(req: IncomingMessage, res: ServerResponse, rawPath: string): Promise<void> {
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      return void res.end('the dashboard is read with GET\n');
    }
    if (rawPath === '/' || rawPath === UI_PREFIX || rawPath === KFP_UI_PREFIX || rawPath === `${KFP_UI_PREFIX}/`) {
      // a Location without a fragment keeps the request's fragment (RFC 9110 §10.2.2)
      res.writeHead(302, { location: `${UI_PREFIX}/` });
      return void res.end();
    }
    let rel: string;
    try {
      rel = decodeURIComponent(rawPath.slice(UI_PREFIX.length + 1));
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
      return void res.end('malformed path\n');
    }
    const file = normalize(join(this.root, rel));
    if (file !== this.root && !file.startsWith(this.root + sep)) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      return void res.end('not found\n');
    }
    const found = rel && extname(rel) ? await this.file(file) : undefined;
    if (found) return this.send(req, res, file, found.size, rel.startsWith('assets/'));
    if (rel.startsWith('assets/') || (extname(rel) && !rel.includes('/'))) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      return void res.end('not found\n');
    }
    // a page of the app: its router reads the path
    const index = join(this.root, 'index.html');
    const st = await this.file(index);
    if (!st) {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' });
      return void res.end(`the dashboard is not built (no ${index}): run \`npm run setup\`\n`);
    }
    return this.send(req, res, index, st.size, false);
  }

  private async file(path: string): Promise<{ size: number } | undefined> {
    try {
      const st = await stat(path);
      return st.isFile() ? { size: st.size } : undefined;
    } catch {
      return undefined;
    }
  }

  private send(req: IncomingMessage, res: ServerResponse, file: string, size: number, immutable: boolean): void {
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': size,
      // hashed asset names never change; index.html must be read again to find the new ones
      'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      'x-content-type-options': 'nosniff',
    });
    if (req.method === 'HEAD') return void res.end();
    createReadStream(file).pipe(res);
  }
}
