// The API server's front door: health, version, metrics and OpenAPI, then inference requests, the KFP
// REST API (kfp.Client), the Kubernetes REST API (src/server/kube/) and the dashboard (/ui/), by path.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../api/errors.js';
import type { KObject, StoredObject } from '../api/meta.js';
import type { KindRegistry } from '../api/registry.js';
import type { S3Stores } from '../artifacts/s3.js';
import type { ArtifactStore } from '../artifacts/store.js';
import type { Client } from '../store/client.js';
import type { PodExecSource, PodLogSource, PodMetricsSource } from '../substrate/substrate.js';
import { send, sendError } from './body.js';
import { isOpenPath, notebookSessionPath, type Authenticator } from './auth/authn.js';
import { forbidden, UnauthorizedError } from './auth/messages.js';
import { methodVerb, requestChecks, type RequestInfo } from './auth/request-info.js';
import { impersonate } from './auth/impersonation.js';
import { peerAddress, podNamespaceAt } from './auth/pod-caller.js';
import { allowAll, setRequestUser, type Authorizer, type UserInfo } from './auth/types.js';
import { rejectUpgrade } from './kube/upgrade.js';
import type { Duplex } from 'node:stream';
import { KubeApi } from './kube/api.js';
import { KubeProxy, matchProxy } from './kube/proxy.js';
import { versionInfo } from './kube/version.js';
import { MetricsApi, metricsGroup } from './kube/metrics-api.js';
import { Kfam } from './kfam.js';
import { KfpApi } from './kfp/api.js';
import { matchRegistryPath, ModelRegistryApi } from './model-registry/api.js';
import { matchNotebook, NotebookProxy } from './notebook-proxy.js';
import type { MetricsRegistry } from './metrics.js';
import { RequestMetrics } from './request-metrics.js';
import type { Gateway } from './inference/gateway.js';
import { handleTraffic, isTrafficPath } from './traffic-api.js';
import { UiFiles } from './ui.js';
import { STREAMS_PATH } from './stream-mux.js';
import { isUsagePath, serveUsage, usageAttributes, type UsageHistory } from './usage-history.js';
import { gpuUsageAttributes, isGpuUsagePath, serveGpuUsage } from './gpu-usage.js';

export interface AppDeps {
  client: Client;
  registry: KindRegistry;
  logs: PodLogSource;
  /** runs `exec` requests; without it they answer 405 */
  exec?: PodExecSource;
  version: string;
  ready: () => boolean;
  /** periodic bookmark interval for watches that ask for them */
  bookmarkMs?: number;
  /** the run controller's default pipeline root, for the KFP API's artifact read-back */
  pipelineRoot?: string;
  /** where the KFP API reads artifacts back from */
  artifacts?: ArtifactStore;
  /** the S3 server of runs whose root is in S3 */
  s3?: S3Stores;
  /** inference requests (by path `/serving/...` or by an InferenceService's host) go here */
  gateway?: Gateway;
  /** Prometheus metrics on `GET /metrics`, every request counted into them (request-metrics.ts) */
  metrics?: MetricsRegistry;
  /** for `?dryRun=All&render=true`: what storing the object would create (src/server/workloads.ts) */
  dryRender?: (obj: StoredObject) => KObject[];
  /** CPU and memory of Pods and the node, for the metrics API (metrics.k8s.io, `kubectl top`) */
  usage?: PodMetricsSource;
  /** the dashboard's built files (default: build/web) */
  uiRoot?: string;
  /** each Pod's recent CPU and memory, at /skiff/v1/namespaces/<ns>/pods/<pod>/usage */
  usageHistory?: UsageHistory;
  /** who each request is from (tenancy on); without it every request is the local admin, unchecked */
  authn?: Authenticator;
  /** what each user may do, and the answers of the access reviews (`kubectl auth can-i`); default: everything */
  authorizer?: Authorizer;
}

export class App {
  private readonly kfp: KfpApi;
  /** Kubeflow Model Registry's REST API (src/server/model-registry/) */
  private readonly registry: ModelRegistryApi;
  readonly kube: KubeApi;
  private readonly ui: UiFiles;
  /** Kubeflow's access-management API, for the dashboard's contributors */
  private readonly kfam: Kfam;
  /** `/notebook/<ns>/<name>/...`: each Notebook's server, HTTP here and WebSocket through `notebooks.upgrade` */
  readonly notebooks: NotebookProxy;
  /** `services/{name}/proxy` and `pods/{name}/proxy`: a Service's or Pod's HTTP server, as kube-apiserver reaches it */
  readonly proxy: KubeProxy;
  /** kube-apiserver's request metrics, for every request but inference (the gateway counts those) */
  private readonly requests?: RequestMetrics;

  constructor(private readonly deps: AppDeps) {
    this.kube = new KubeApi({ client: deps.client, registry: deps.registry, logs: deps.logs, ...(deps.exec ? { exec: deps.exec } : {}), ...(deps.bookmarkMs !== undefined ? { bookmarkMs: deps.bookmarkMs } : {}), ...(deps.dryRender ? { dryRender: deps.dryRender } : {}), ...(deps.authorizer ? { authorizer: deps.authorizer } : {}) });
    if (deps.usage) {
      const metricsApi = new MetricsApi({ client: deps.client, usage: deps.usage });
      // metrics.k8s.io: listed by discovery, answered by its own handler (nothing is stored)
      this.kube.discovery.addGroup({ ...metricsGroup, handle: (req, res, url, rest) => metricsApi.handle(req, res, url, ['', 'apis', metricsGroup.group, metricsGroup.version, ...rest].join('/')) });
    }
    this.ui = new UiFiles(deps.uiRoot);
    this.kfam = new Kfam(deps.client);
    this.notebooks = new NotebookProxy(deps.client);
    this.proxy = new KubeProxy(deps.client);
    // with tenancy on, the KFP API authorizes each request itself, as KFP's multi-user mode does: only
    // its handlers know the namespace (a run's experiment's, a pipeline's, or the one the request names)
    this.kfp = new KfpApi({ client: deps.client, version: deps.version, pipelineRoot: deps.pipelineRoot, ...(deps.artifacts ? { artifacts: deps.artifacts } : {}), ...(deps.s3 ? { s3: deps.s3 } : {}), ...(deps.authn ? { authorizer: deps.authorizer ?? allowAll } : {}) });
    this.registry = new ModelRegistryApi({ client: deps.client, ...(deps.authn ? { authorizer: deps.authorizer ?? allowAll } : {}) });
    if (deps.metrics) this.requests = new RequestMetrics(deps.metrics, this.kube.discovery);
  }

  /** node:http request listener */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const inference = this.deps.gateway?.match(req);
    if (!inference) this.requests?.track(req, res);
    if (!this.deps.authn) return this.serve(req, res, inference);
    this.admit(req, false).then(
      (refusal) => (refusal ? sendError(res, refusal) : this.serve(req, res, this.deps.gateway?.match(req))),
      (e: unknown) => sendError(res, e),
    );
  };

  /** wraps an `upgrade` listener (exec, attach, port-forward, the dashboard's streams) so it sees only admitted requests */
  guardUpgrade(listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
    const guarded = this.admitUpgrade(listener);
    const requests = this.requests;
    if (!requests) return guarded;
    return (req, socket, head) => {
      if (!this.deps.gateway?.match(req)) requests.trackUpgrade(req, socket);
      guarded(req, socket, head);
    };
  }

  private admitUpgrade(listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
    if (!this.deps.authn) return listener;
    return (req, socket, head) => {
      // the socket is nobody else's until admitted: its errors must not go unheard meanwhile
      const onError = (): void => void socket.destroy();
      socket.on('error', onError);
      this.admit(req, true).then(
        (refusal) => {
          socket.off('error', onError);
          if (refusal) rejectUpgrade(socket, refusal);
          else listener(req, socket, head);
        },
        (e: unknown) => rejectUpgrade(socket, e),
      );
    };
  }

  /**
   * Authentication, then authorization, as kube-apiserver's filters run them: the request's user is
   * recorded for the handlers (`requestUser`), and a refusal is returned as the error to answer with:
   * 401 for credentials that prove nothing or none where they are needed, 403 for a user the
   * authorizer refuses.
   */
  private async admit(req: IncomingMessage, upgrade: boolean): Promise<ApiError | undefined> {
    const authn = this.deps.authn;
    if (!authn) return undefined;
    const url = req.url ?? '/';
    const path = new URL(url, 'http://skiff.local').pathname;
    // clearing the notebook cookie needs no credentials: signing out works with a token already revoked
    // (the raw path: one that resolves there through dot segments is a notebook's, and checked as one)
    const open = isOpenPath(path) || (url.split('?')[0] === notebookSessionPath && req.method === 'DELETE');
    const who = await authn.authenticate(req);
    if ('failure' in who || who.anonymous) {
      if (!open && !('failure' in who) && (await this.samePodNamespace(req, authn))) return undefined;
      if (!open) return new UnauthorizedError();
      setRequestUser(req, 'failure' in who ? { username: 'system:anonymous', groups: ['system:unauthenticated'] } : who.user);
      return undefined;
    }
    const authorizer = this.deps.authorizer ?? allowAll;
    // `kubectl --as`: the user the request acts as, once the real user may impersonate it
    let user: UserInfo;
    try {
      user = impersonate(req, who.user, authorizer);
    } catch (e) {
      if (e instanceof ApiError) return e;
      throw e;
    }
    setRequestUser(req, user);
    if (open) return undefined;
    for (const check of this.checksOf(req, url, upgrade)) {
      const attrs = check.resource ? { user, resource: check.resource } : { user, nonResource: check.nonResource };
      const d = authorizer.authorize(attrs);
      if (!d.allowed) return forbidden(attrs, d.reason);
    }
    return undefined;
  }

  /**
   * An inference request with no token from a Pod of the service's own namespace: a KServe
   * transformer calling its predictor (KServe's SDK sends no credentials; in Kubeflow the mesh lets a
   * namespace's Pods reach each other). It acts as an anonymous caller; a token, when given, counts instead.
   */
  private async samePodNamespace(req: IncomingMessage, authn: Authenticator): Promise<boolean> {
    const inference = this.deps.gateway?.match(req);
    if (!inference || !authn.isFromPod(req)) return false;
    const ns = await podNamespaceAt(this.deps.client, peerAddress(req));
    if (ns === undefined || ns !== inference.route.namespace) return false;
    setRequestUser(req, { username: 'system:anonymous', groups: ['system:unauthenticated'], extra: { 'skiff.dev/pod-namespace': [ns] } });
    return true;
  }

  /** what a request asks, in the authorizer's terms */
  private checksOf(req: IncomingMessage, url: string, upgrade: boolean): RequestInfo[] {
    const method = req.method ?? 'GET';
    // an inference request reaches a service as kube's service proxy does: `inferenceservices/proxy`
    const inference = this.deps.gateway?.match(req);
    if (inference) {
      return [{ resource: { verb: methodVerb(method) || 'get', apiGroup: 'serving.kserve.io', resource: 'inferenceservices', subresource: 'proxy', namespace: inference.route.namespace, name: inference.route.name } }];
    }
    // a notebook's server is reached as kube's service proxy reaches a service: `notebooks/proxy`,
    // which Kubeflow's edit role grants and its view role does not (the server runs the caller's code)
    const notebook = matchNotebook(url);
    if (notebook) {
      return [{ resource: { verb: methodVerb(method) || 'get', apiGroup: 'kubeflow.org', resource: 'notebooks', subresource: 'proxy', namespace: notebook.namespace, name: notebook.name } }];
    }
    const path = new URL(url, 'http://skiff.local').pathname;
    // anyone signed in may keep their own token in the notebook cookie
    if (url.split('?')[0] === notebookSessionPath) return [];
    // KFAM decides itself: only a namespace's owner (or a cluster admin) changes its contributors
    if (this.kfam.handles(path)) return [];
    // the dashboard's stream mux asks nothing itself: each stream on it is a request of the same user's,
    // decided as that request (stream-mux.ts)
    if (path === STREAMS_PATH) return [];
    // the KFP API: any signed-in user gets in, and its handlers ask for pipelines.kubeflow.org
    // permissions in the namespace each request turns out to touch (src/server/kfp/authz.ts)
    if (path === '/apis/v2beta1' || path.startsWith('/apis/v2beta1/')) return [];
    // the Model Registry API likewise: its handlers authorize in the namespace of the registry asked
    if (matchRegistryPath(path)) return [];
    // the dashboard's usage charts show a Pod's CPU and memory: whoever may read the Pod may see them
    const usage = this.deps.usageHistory ? usageAttributes(method, url) : undefined;
    if (usage) return [{ resource: usage }];
    // a node's GPU cards and their shares: a view of the Node
    const gpus = gpuUsageAttributes(method, path);
    if (gpus) return [{ resource: gpus }];
    return requestChecks(method, url, upgrade);
  }

  /** `inference`: the gateway's match for this request, made just before */
  private serve(req: IncomingMessage, res: ServerResponse, inference: ReturnType<Gateway['match']>): void {
    if (inference) return this.deps.gateway?.handle(req, res, inference);
    if ((req.url ?? '/').split('?')[0] === notebookSessionPath) return this.notebooks.session(req, res);
    const notebook = matchNotebook(req.url ?? '/');
    if (notebook) return this.notebooks.handle(req, res, notebook);
    // before route(), which drops a trailing slash: `.../proxy/` and `.../proxy` differ to the server behind
    const proxied = matchProxy(req.url ?? '/');
    if (proxied) return this.proxy.handle(req, res, proxied);
    this.route(req, res).catch((e) => sendError(res, e));
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://skiff.local');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    switch (path) {
      case '/healthz':
      case '/livez':
        return this.text(res, 200, 'ok');
      case '/readyz':
        return this.deps.ready() ? this.text(res, 200, 'ok') : this.text(res, 503, 'starting');
      case '/version':
        return send(res, 200, versionInfo(this.deps.version));
      case '/metrics': {
        if (!this.deps.metrics) break;
        const text = await this.deps.metrics.render();
        res.writeHead(200, { 'content-type': this.deps.metrics.contentType });
        return void res.end(text);
      }
    }
    if (this.kfam.handles(path)) return this.kfam.handle(req, res, url, path);
    if (this.ui.handles(url.pathname)) return this.ui.handle(req, res, url.pathname);
    if (this.deps.usageHistory && isUsagePath(path)) return serveUsage(this.deps.usageHistory, this.deps.client, req, res, url, path);
    if (isGpuUsagePath(path)) return serveGpuUsage(this.deps.client, this.deps.usage, req, res, path);
    if (isTrafficPath(path)) return handleTraffic(req, res, url, path, this.deps.gateway?.history);
    if (path === '/openapi.json' || path === '/openapi/v2' || path === '/openapi/v3' || path.startsWith('/openapi/v3/')) {
      if (this.kube.openapi.handle(req, res, url, path, this.deps.version)) return;
    }
    // the Model Registry REST API before the Kubernetes API, whose /api/ it shares a first segment with
    const registry = matchRegistryPath(path);
    if (registry) return this.registry.handle(req, res, url, registry);
    // the KFP v2beta1 REST API (kfp.Client) before the Kubernetes-style /apis/{group}/{version}
    if (path === '/apis/v2beta1' || path.startsWith('/apis/v2beta1/')) return this.kfp.handle(req, res, url, path);
    if (path === '/api' || path === '/apis' || path.startsWith('/api/') || path.startsWith('/apis/')) return this.kube.handle(req, res, url, path);
    throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource (${method} ${path})`);
  }

  private text(res: ServerResponse, code: number, body: string): void {
    res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(body);
  }
}
