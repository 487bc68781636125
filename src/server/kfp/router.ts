// The KFP API's route table: a method and a path pattern under /apis/v2beta1 (`/runs/{run_id}`,
// `/runs/{run_id}:archive`, Google's custom-verb form) to a handler. A `{name}` segment captures
// one path segment; a `:{name}` verb captures any verb. The first route that matches wins, so
// literal segments (`/pipelines/upload`) are listed before the patterns that would take them.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** One request as a handler sees it: the path's parameters by name, and the custom verb if any. */
export interface Call<Ctx> {
  ctx: Ctx;
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Record<string, string>;
}

export interface Route<Ctx> {
  method: string;
  pattern: string;
  /** the answer, sent as JSON, or undefined when the handler wrote the response itself */
  handle: (call: Call<Ctx>) => Promise<unknown>;
}

interface Compiled<Ctx> extends Route<Ctx> {
  segs: string[];
  verb: string | undefined;
}

/**
 * A request path as segments after its API's prefix (`depth` segments: /apis/v2beta1 is 2), each
 * decoded, with `:verb` split off the last.
 */
export function splitPath(path: string, depth = 2): { segs: string[]; verb: string | undefined } {
  const segs = path.split('/').filter(Boolean).slice(depth).map((s) => decodeURIComponent(s));
  const last = segs[segs.length - 1] ?? '';
  const colon = last.lastIndexOf(':');
  if (colon < 0) return { segs, verb: undefined };
  segs[segs.length - 1] = last.slice(0, colon);
  return { segs, verb: last.slice(colon + 1) };
}

const param = (s: string): string | undefined => (s.startsWith('{') && s.endsWith('}') ? s.slice(1, -1) : undefined);

export class Router<Ctx> {
  private readonly routes: Compiled<Ctx>[];

  /** `depth`: how many leading path segments are the API's prefix (/apis/v2beta1: 2) */
  constructor(routes: Route<Ctx>[], private readonly depth = 2) {
    this.routes = routes.map((r) => {
      const [head = '', verb] = r.pattern.split(':');
      return { ...r, segs: head.split('/').filter(Boolean), verb };
    });
  }

  /** the first route for this method and path, with the parameters it captured */
  match(method: string, path: string): { route: Route<Ctx>; params: Record<string, string> } | undefined {
    const { segs, verb } = splitPath(path, this.depth);
    for (const r of this.routes) {
      if (r.method !== method || r.segs.length !== segs.length) continue;
      const params: Record<string, string> = {};
      if (!matchVerb(r.verb, verb, params)) continue;
      if (r.segs.every((s, i) => matchSeg(s, segs[i] as string, params))) return { route: r, params };
    }
    return undefined;
  }
}

function matchSeg(pattern: string, seg: string, params: Record<string, string>): boolean {
  const name = param(pattern);
  if (name === undefined) return pattern === seg;
  params[name] = seg;
  return true;
}

function matchVerb(pattern: string | undefined, verb: string | undefined, params: Record<string, string>): boolean {
  if (pattern === undefined || verb === undefined) return pattern === verb;
  return matchSeg(pattern, verb, params);
}
