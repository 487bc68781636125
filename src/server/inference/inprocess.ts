// An ONNX model served inside Skiff's own process by onnxruntime-node, answering the same V1 and V2
// REST requests a model-server Pod would, so the gateway treats it as one more replica (batching,
// concurrency, canaries and metrics work the same). The session runs inferences on its own threads
// (see onnx.ts), so the event loop stays free while a model computes.
import { randomUUID } from 'node:crypto';
import type { UpstreamResponse } from './dispatch.js';
import { OnnxModel } from './onnx.js';
import { ProtocolError, nestedToTensor, tensorToNested } from './tensor.js';
import type { Tensor } from './tensor.js';
import { encodeInferResponse, parseInferRequest } from './v2.js';
import { parseV1Request } from './v1.js';

const json = (status: number, v: unknown): UpstreamResponse => ({ status, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(v)) });

export class InProcessOnnxServer {
  private constructor(readonly name: string, readonly model: OnnxModel) {}

  static async load(name: string, path: string): Promise<InProcessOnnxServer> {
    return new InProcessOnnxServer(name, await OnnxModel.load(path));
  }

  async close(): Promise<void> {
    await this.model.close();
  }

  async call(method: string, path: string, headers: Record<string, string>, body: Buffer | undefined): Promise<UpstreamResponse> {
    try {
      return await this.route(method, path, headers, body ?? Buffer.alloc(0));
    } catch (e) {
      if (e instanceof ProtocolError) return json(e.status, { error: e.message });
      return json(500, { error: `${(e as Error).name} : ${(e as Error).message}` });
    }
  }

  private async route(method: string, path: string, headers: Record<string, string>, body: Buffer): Promise<UpstreamResponse> {
    const p = path.split('?')[0] ?? path;
    const m = /^\/v([12])\/models\/([^/:]+)(.*)$/.exec(decodeURIComponent(p));
    if (method === 'GET') {
      if (p === '/' ) return json(200, { status: 'alive' });
      if (p === '/v2/health/live') return json(200, { live: true });
      if (p === '/v2/health/ready') return json(200, { ready: true });
      if (p === '/v2') return json(200, { name: 'skiff-onnxruntime', version: '1', extensions: ['binary_tensor_data'] });
      if (p === '/v1/models' || p === '/v2/models') return json(200, { models: [this.name] });
    }
    if (!m) return json(404, { error: `no route for ${method} ${p}` });
    const [, version, model, rest] = m as unknown as [string, string, string, string];
    if (model !== this.name) return json(404, { error: `Model with name ${model} does not exist.` });
    const tail = rest.replace(/^\/versions\/[^/]+/, '');
    if (method === 'GET') {
      if (version === '1' && tail === '') return json(200, { name: this.name, ready: true });
      if (version === '2' && tail === '/ready') return json(200, { name: this.name, ready: true });
      if (version === '2' && tail === '') {
        return json(200, { name: this.name, versions: ['1'], platform: 'onnxruntime_onnx', inputs: this.model.inputs, outputs: this.model.outputs });
      }
      return json(405, { error: `${method} is not allowed on ${p}` });
    }
    if (method !== 'POST') return json(405, { error: `${method} is not allowed on ${p}` });
    if (version === '2' && tail === '/infer') {
      const req = parseInferRequest(body, { 'content-type': headers['content-type'], 'inference-header-content-length': headers['inference-header-content-length'] });
      const outputs = await this.model.infer(req.inputs, req.outputs?.map((o) => o.name));
      const enc = encodeInferResponse({ model_name: this.name, id: req.id ?? randomUUID(), outputs }, req);
      return { status: 200, headers: enc.headers, body: enc.body };
    }
    if (version === '1' && (tail === ':predict' || tail === '%3Apredict')) {
      const { instances } = parseV1Request(body, headers['content-type']);
      const spec = this.model.inputs[0];
      if (!spec) throw new ProtocolError(400, 'the model has no inputs');
      const input: Tensor = nestedToTensor(spec.name, instances, spec.datatype);
      const outputs = await this.model.infer([input]);
      const first = outputs[0];
      return json(200, { predictions: first ? tensorToNested(first) : [] });
    }
    return json(404, { error: `no route for ${method} ${p}` });
  }
}
