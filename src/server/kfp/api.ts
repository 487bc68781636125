// The KFP v2beta1 REST API (what `kfp.Client` speaks) over Skiff's objects: Pipelines and their
// versions, Experiments, Runs and RecurringRuns under /apis/v2beta1/, plus Skiff's lineage and
// artifact read-back endpoints. Requests and answers use KFP's JSON: snake_case, enums as names.
// Each resource's handlers and routes live in its own file; this one is the table they make.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { artifactRoutes } from './artifacts.js';
import { KfpError, sendJson, sendKfpError } from './errors.js';
import { experimentRoutes } from './experiments.js';
import { pipelineVersionRoutes } from './pipeline-versions.js';
import { pipelineRoutes } from './pipelines.js';
import { recurringRunRoutes } from './recurring-runs.js';
import type { KfpApiDeps } from './request.js';
import { KfpContext } from './request.js';
import type { Route } from './router.js';
import { Router, splitPath } from './router.js';
import { runRoutes } from './runs.js';

export type { KfpApiDeps } from './request.js';

/** KFP API families Skiff does not serve: a 501 says so rather than a 404 */
const NOT_IMPLEMENTED = new Set(['filters', 'visualizations', 'workflows', 'scheduledworkflows']);

function serviceRoutes(version: string): Route<KfpContext>[] {
  return [
    // multi_user tells kfp.Client in a Pod to work in the Pod's namespace, as KFP's multi-user mode does
    { method: 'GET', pattern: '/healthz', handle: async ({ ctx }) => ({ commit_sha: 'unknown', tag_name: version, multi_user: ctx.multiUser, pipeline_store: 'database' }) },
    { method: 'GET', pattern: '/auth', handle: async () => ({}) },
  ];
}

export class KfpApi {
  private readonly ctx: KfpContext;
  // pipelines before versions: `/pipelines/names/{name}` must win over `/pipelines/{id}/versions`
  private readonly router: Router<KfpContext>;

  constructor(deps: KfpApiDeps) {
    this.ctx = new KfpContext(deps);
    this.router = new Router([
      ...serviceRoutes(deps.version), ...pipelineRoutes, ...pipelineVersionRoutes, ...experimentRoutes,
      ...runRoutes, ...artifactRoutes, ...recurringRunRoutes,
    ]);
  }

  /** serves one request under /apis/v2beta1 */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<void> {
    const upload = /^\/apis\/v2beta1\/pipelines\/upload(_version)?$/.test(path);
    try {
      await this.route(req, res, url, path);
    } catch (e) {
      sendKfpError(res, e, upload);
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<void> {
    const method = req.method ?? 'GET';
    const found = this.router.match(method, path);
    if (!found) {
      if (NOT_IMPLEMENTED.has(splitPath(path).segs[0] ?? '')) throw new KfpError(501, `${method} ${path} is not implemented by Skiff`);
      throw new KfpError(404, `no route for ${method} ${path}`);
    }
    const body = await found.route.handle({ ctx: this.ctx, req, res, url, params: found.params });
    if (body !== undefined) sendJson(res, body);
  }
}
