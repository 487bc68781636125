// The hand-written alternative to serving an ONNX model with Skiff: one process, node:http and
// onnxruntime-node called directly — parse the V2 JSON request, run the session, answer V2 JSON.
// No routing, validation, queueing, batching or metrics. Usage: node onnx-direct.js MODEL.onnx;
// prints its port.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as ort from 'onnxruntime-node';

const file = process.argv[2] as string;
const session = await ort.InferenceSession.create(file, { executionMode: 'sequential', graphOptimizationLevel: 'all', interOpNumThreads: 1, intraOpNumThreads: 1 });
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    void (async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: string; inputs: { name: string; shape: number[]; data: number[] }[] };
        const feeds: Record<string, ort.Tensor> = {};
        for (const i of body.inputs) feeds[i.name] = new ort.Tensor('float32', Float32Array.from(i.data.flat(Infinity) as number[]), i.shape);
        const out = await session.run(feeds);
        const outputs = Object.entries(out).map(([name, t]) => ({ name, datatype: 'FP32', shape: t.dims, data: Array.from(t.data as Float32Array) }));
        const text = Buffer.from(JSON.stringify({ model_name: 'm', id: body.id ?? '', outputs }));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': text.length });
        res.end(text);
      } catch (e) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: (e as Error).message }));
      }
    })();
  });
});
server.keepAliveTimeout = 65000;
server.listen(0, '127.0.0.1', () => console.log((server.address() as AddressInfo).port));
