// The worker thread that owns one ONNX Runtime session. onnxruntime-node's `run` executes on the
// calling thread, so each model runs here to keep the gateway's event loop free. Runs are served one
// at a time, in arrival order; outputs go back as transferred ArrayBuffers.
import { parentPort, workerData } from 'node:worker_threads';

export interface WorkerInit {
  file: string;
  intraOpThreads?: number;
}

/** an ONNX value: ORT element type name, dims and data (strings for `string` tensors) */
export interface WireTensor {
  name: string;
  type: string;
  dims: number[];
  data: ArrayBufferView | string[];
}

export interface WireMeta {
  name: string;
  isTensor: boolean;
  type?: string;
  shape?: (number | string)[];
}

export type ToWorker =
  | { op: 'run'; id: number; feeds: WireTensor[]; outputs?: string[] }
  | { op: 'calibrate'; runs: number }
  | { op: 'close' };

export type FromWorker =
  | { op: 'ready'; inputs: WireMeta[]; outputs: WireMeta[] }
  | { op: 'failed'; message: string }
  | { op: 'result'; id: number; outputs: WireTensor[] }
  | { op: 'error'; id: number; message: string }
  | { op: 'calibrated'; medianUs?: number }
  | { op: 'closed' };

const zeroArrays: Record<string, new (n: number) => ArrayBufferView> = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array,
  uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array, bool: Uint8Array,
};

type Ort = typeof import('onnxruntime-node');
type Session = Awaited<ReturnType<Ort['InferenceSession']['create']>>;

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function meta(list: readonly { name: string; isTensor: boolean; type?: string; shape?: readonly (number | string)[] }[]): WireMeta[] {
  return list.map((m) => {
    const out: WireMeta = { name: m.name, isTensor: m.isTensor };
    if (m.isTensor) {
      if (m.type !== undefined) out.type = m.type;
      if (m.shape !== undefined) out.shape = [...m.shape];
    }
    return out;
  });
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) return;
  const init = workerData as WorkerInit;
  const post = (m: FromWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);
  let ort: Ort;
  let session: Session;
  try {
    ort = await import('onnxruntime-node');
    const options: Parameters<Ort['InferenceSession']['create']>[1] = {
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      interOpNumThreads: 1,
    };
    if (init.intraOpThreads !== undefined) options.intraOpNumThreads = init.intraOpThreads;
    session = await ort.InferenceSession.create(init.file, options);
  } catch (e) {
    post({ op: 'failed', message: message(e) });
    return;
  }
  post({ op: 'ready', inputs: meta(session.inputMetadata), outputs: meta(session.outputMetadata) });

  const queue: ToWorker[] = [];
  let busy = false;
  const pump = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    while (queue.length > 0) {
      const m = queue.shift() as ToWorker;
      if (m.op === 'close') {
        await session.release().catch(() => undefined);
        post({ op: 'closed' });
        port.close();
        return;
      }
      if (m.op === 'calibrate') {
        // how long one single-row inference takes: zeros of each input's shape, dynamic dims as 1
        try {
          const feeds: Record<string, InstanceType<Ort['Tensor']>> = {};
          for (const inp of session.inputMetadata) {
            const Ctor = inp.isTensor ? zeroArrays[inp.type] : undefined;
            if (!inp.isTensor || !Ctor) throw new Error('not a numeric tensor');
            const dims = inp.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1));
            feeds[inp.name] = new ort.Tensor(inp.type as 'float32', new Ctor(dims.reduce((a, b) => a * b, 1)) as Float32Array, dims);
          }
          const times: number[] = [];
          for (let i = 0; i < m.runs; i++) {
            const t0 = performance.now();
            await session.run(feeds);
            times.push(performance.now() - t0);
          }
          times.sort((a, b) => a - b);
          post({ op: 'calibrated', medianUs: (times[Math.floor(times.length / 2)] ?? 0) * 1000 });
        } catch {
          post({ op: 'calibrated' });
        }
        continue;
      }
      try {
        const feeds: Record<string, InstanceType<Ort['Tensor']>> = {};
        for (const f of m.feeds) {
          feeds[f.name] = new ort.Tensor(f.type as 'float32', f.data as Float32Array, f.dims);
        }
        const result = m.outputs ? await session.run(feeds, m.outputs) : await session.run(feeds);
        const outputs: WireTensor[] = [];
        const transfer: ArrayBuffer[] = [];
        for (const [name, value] of Object.entries(result)) {
          const t = value as InstanceType<Ort['Tensor']>;
          let data = t.data as ArrayBufferView | string[];
          if (!Array.isArray(data)) {
            const view = data as ArrayBufferView;
            // hand over the whole buffer when the output owns it, a copy otherwise
            if (!(view.buffer instanceof ArrayBuffer) || view.byteOffset !== 0 || view.byteLength !== view.buffer.byteLength || transfer.includes(view.buffer)) {
              data = (view as Uint8Array).slice();
            }
            transfer.push((data as ArrayBufferView).buffer as ArrayBuffer);
          }
          outputs.push({ name, type: t.type, dims: [...t.dims], data });
        }
        try {
          post({ op: 'result', id: m.id, outputs }, transfer);
        } catch {
          post({ op: 'result', id: m.id, outputs });
        }
      } catch (e) {
        post({ op: 'error', id: m.id, message: message(e) });
      }
    }
    busy = false;
  };
  port.on('message', (m: ToWorker) => {
    queue.push(m);
    void pump();
  });
}

void main();
