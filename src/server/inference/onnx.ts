// An ONNX model served inside the gateway process. onnxruntime-node runs inference on the calling
// thread, which would stall the event loop for the length of every inference, so a model gets a
// worker thread holding its session — unless a request is so cheap that handing it to a thread costs
// more than running it: at load time the worker times single-row inferences, and when the median is
// under `inlineMaxUs` (200 µs) the model also gets a session on the event loop, which takes the
// requests whose estimated cost (that time, scaled by the request's size) stays under the bound;
// larger ones (big batches) still go to the worker. Requests are
// validated here against the model's inputs, so a bad request is a 400 naming the input and never
// reaches the runtime.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Datatype, Tensor, TensorData } from './tensor.js';
import { ProtocolError, dataMatches, elementCount, shapeText } from './tensor.js';
import type { FromWorker, ToWorker, WireMeta, WireTensor, WorkerInit } from './onnx-worker.js';
import { after } from '../../util/timers.js';

/** a model input or output: -1 marks a dynamic dim */
export interface TensorSpec {
  name: string;
  datatype: Datatype;
  shape: number[];
}

/** ONNX Runtime element types and the V2 datatypes they serve as */
const ORT_TO_V2: Record<string, Datatype> = {
  float32: 'FP32', float64: 'FP64', float16: 'FP16',
  int8: 'INT8', int16: 'INT16', int32: 'INT32', int64: 'INT64',
  uint8: 'UINT8', uint16: 'UINT16', uint32: 'UINT32', uint64: 'UINT64',
  bool: 'BOOL', string: 'BYTES',
};
const V2_TO_ORT: Partial<Record<Datatype, string>> = Object.fromEntries(Object.entries(ORT_TO_V2).map(([k, v]) => [v, k]));

/** the V2 datatype for an ONNX Runtime element type, undefined when Skiff cannot serve it */
export function datatypeForOrt(type: string): Datatype | undefined {
  return ORT_TO_V2[type];
}

export function ortTypeFor(dt: Datatype): string | undefined {
  return V2_TO_ORT[dt];
}

/**
 * The .onnx file a model path names: the file itself; a directory's only *.onnx file; or, in the
 * Triton repository layout `<dir>/[<model>/]<version>/model.onnx`, the highest numeric version.
 */
export function resolveOnnxFile(path: string): string {
  if (!existsSync(path)) throw new Error(`model path ${path} does not exist`);
  if (!statSync(path).isDirectory()) return path;
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const p = join(dir, e.name);
      if (e.isDirectory() && depth < 3) walk(p, depth + 1);
      else if ((e.isFile() || e.isSymbolicLink()) && e.name.endsWith('.onnx')) found.push(p);
    }
  };
  walk(path, 0);
  const direct = found.filter((f) => dirname(f) === path);
  if (direct.length === 1) return direct[0] as string;
  if (direct.length > 1) throw new Error(`found ${direct.length} .onnx files in ${path} (${direct.map((f) => basename(f)).join(', ')}); expected exactly one`);
  // Triton layout: versions are numeric directories holding model.onnx, all under one model
  const versioned = found.filter((f) => basename(f) === 'model.onnx' && /^\d+$/.test(basename(dirname(f))));
  const models = new Set(versioned.map((f) => dirname(dirname(f))));
  if (versioned.length > 0 && versioned.length === found.length && models.size === 1) {
    return versioned.sort((a, b) => Number(basename(dirname(b))) - Number(basename(dirname(a))))[0] as string;
  }
  if (found.length === 1) return found[0] as string;
  if (found.length === 0) throw new Error(`no .onnx file in ${path}`);
  throw new Error(`found ${found.length} .onnx files under ${path} (${found.map((f) => f.slice(path.length + 1)).join(', ')}); expected exactly one`);
}

function specsOf(list: WireMeta[], kind: 'input' | 'output'): TensorSpec[] {
  return list.map((m) => {
    if (!m.isTensor || m.type === undefined) throw new Error(`${kind} "${m.name}" is not a tensor (sequences and maps are not supported)`);
    const datatype = datatypeForOrt(m.type);
    if (!datatype) throw new Error(`${kind} "${m.name}" has element type ${m.type}, which Skiff cannot serve`);
    const shape = (m.shape ?? []).map((d) => (typeof d === 'number' && d >= 0 ? d : -1));
    return { name: m.name, datatype, shape };
  });
}

function toWire(t: Tensor, type: string): { wire: WireTensor; transfer: ArrayBuffer[] } {
  if (Array.isArray(t.data)) {
    return { wire: { name: t.name, type, dims: t.shape, data: t.data.map((b) => b.toString('utf8')) }, transfer: [] };
  }
  // the worker gets its own copy; the caller's data (often a view over the request body) stays intact
  const view = t.data;
  // (Buffer's slice is a view, so a Buffer is copied into a plain Uint8Array)
  const copy = Buffer.isBuffer(view) ? Uint8Array.from(view) : view.slice();
  return { wire: { name: t.name, type, dims: t.shape, data: copy }, transfer: [copy.buffer as ArrayBuffer] };
}

function fromWire(w: WireTensor): Tensor {
  const datatype = datatypeForOrt(w.type);
  if (!datatype) throw new ProtocolError(500, `output "${w.name}" has element type ${w.type}, which Skiff cannot serve`);
  let data: TensorData;
  if (Array.isArray(w.data)) data = w.data.map((s) => Buffer.from(s, 'utf8'));
  else if (datatype === 'BOOL' && !(w.data instanceof Uint8Array)) data = Uint8Array.from(w.data as unknown as ArrayLike<number>, (v) => (v ? 1 : 0));
  else data = w.data as TensorData;
  return { name: w.name, datatype, shape: w.dims, data };
}

interface Pending {
  resolve: (t: Tensor[]) => void;
  reject: (e: Error) => void;
}

type Ort = typeof import('onnxruntime-node');
type Session = Awaited<ReturnType<Ort['InferenceSession']['create']>>;
let ortModule: Promise<Ort> | undefined;

export interface OnnxLoadOptions {
  intraOpThreads?: number;
  /** where inference runs: `auto` (default) measures the model and picks */
  mode?: 'auto' | 'worker' | 'inline';
  /** `auto` runs a model on the event loop when one row takes at most this long (default 200 µs) */
  inlineMaxUs?: number;
}

function sessionOptions(intraOpThreads?: number): Parameters<Ort['InferenceSession']['create']>[1] {
  const options: Parameters<Ort['InferenceSession']['create']>[1] = { executionMode: 'sequential', graphOptimizationLevel: 'all', interOpNumThreads: 1 };
  if (intraOpThreads !== undefined) options.intraOpNumThreads = intraOpThreads;
  return options;
}

/** the worker's timing of single-row inferences, in µs; undefined when it cannot make such inputs */
function calibrate(worker: Worker): Promise<number | undefined> {
  return new Promise((resolve) => {
    const on = (m: FromWorker): void => {
      if (m.op !== 'calibrated') return;
      worker.off('message', on);
      resolve(m.medianUs);
    };
    worker.on('message', on);
    worker.postMessage({ op: 'calibrate', runs: 30 } satisfies ToWorker);
  });
}

export class OnnxModel {
  readonly inputs: TensorSpec[];
  readonly outputs: TensorSpec[];
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private dead: Error | null = null;
  private closing: Promise<void> | null = null;

  /** where inferences run: a worker thread; or also the event loop, for requests cheaper than the hand-off */
  readonly mode: 'worker' | 'inline' | 'both';
  private readonly calibElements: number;
  private readonly inlineMaxUs: number;
  /** the worker's median single-row inference time at load, when measured */
  readonly calibratedUs: number | undefined;

  private constructor(readonly file: string, private readonly worker: Worker | undefined, inputs: TensorSpec[], outputs: TensorSpec[], private readonly inline?: { ort: Ort; session: Session }, calibratedUs?: number, inlineMaxUs = 200) {
    this.inputs = inputs;
    this.outputs = outputs;
    this.mode = inline ? (worker ? 'both' : 'inline') : 'worker';
    this.calibratedUs = calibratedUs;
    this.inlineMaxUs = inlineMaxUs;
    this.calibElements = inputs.reduce((a, t) => a + t.shape.reduce((p, d) => p * (d > 0 ? d : 1), 1), 0) || 1;
    if (!worker) return;
    worker.on('message', (m: FromWorker) => this.onMessage(m));
    worker.on('error', (e) => this.fail(new Error(`model worker for ${file} failed: ${e.message}`)));
    worker.on('exit', (code) => this.fail(new Error(this.closing ? `model ${file} is closed` : `model worker for ${file} exited (code ${code})`)));
  }

  /**
   * Loads a model from a .onnx file or a directory holding one (see resolveOnnxFile). Rejects with a
   * message fit for a FailedToLoad condition when the file is missing, ambiguous or not a valid model.
   */
  static async load(path: string, opts: OnnxLoadOptions = {}): Promise<OnnxModel> {
    const file = resolveOnnxFile(path);
    const init: WorkerInit = { file };
    if (opts.intraOpThreads !== undefined) init.intraOpThreads = opts.intraOpThreads;
    const worker = new Worker(new URL('./onnx-worker.js', import.meta.url), { workerData: init });
    const first = await new Promise<FromWorker>((resolve, reject) => {
      const onExit = (code: number): void => reject(new Error(`failed to load ONNX model ${file}: the model worker exited (code ${code})`));
      worker.once('error', (e) => { worker.off('exit', onExit); reject(new Error(`failed to load ONNX model ${file}: ${e.message}`)); });
      worker.once('exit', onExit);
      worker.once('message', (m: FromWorker) => { worker.off('exit', onExit); resolve(m); });
    });
    if (first.op !== 'ready') {
      await worker.terminate();
      const why = first.op === 'failed' ? first.message : `unexpected message ${first.op}`;
      throw new Error(`failed to load ONNX model ${file}: ${why}`);
    }
    let inputs: TensorSpec[];
    let outputs: TensorSpec[];
    try {
      inputs = specsOf(first.inputs, 'input');
      outputs = specsOf(first.outputs, 'output');
    } catch (e) {
      await worker.terminate();
      throw new Error(`failed to load ONNX model ${file}: ${(e as Error).message}`);
    }
    const mode = opts.mode ?? 'auto';
    const us = mode === 'auto' ? await calibrate(worker) : undefined;
    const maxUs = opts.inlineMaxUs ?? 200;
    if (mode === 'inline' || (us !== undefined && us <= maxUs)) {
      try {
        const ort = await (ortModule ??= import('onnxruntime-node'));
        // requests this small gain nothing from intra-op threads, whose spinning between runs would
        // take CPU from the event loop
        const session = await ort.InferenceSession.create(file, sessionOptions(1));
        if (mode === 'inline') await worker.terminate();
        return new OnnxModel(file, mode === 'inline' ? undefined : worker, inputs, outputs, { ort, session }, us, maxUs);
      } catch {
        // the worker's session stays in use
      }
    }
    return new OnnxModel(file, worker, inputs, outputs, undefined, us, maxUs);
  }

  /** Checks inputs against the model's names, datatypes and shapes; ProtocolError(400) naming the input. */
  validate(inputs: Tensor[], outputNames?: string[]): void {
    const given = new Set<string>();
    for (const t of inputs) {
      const spec = this.inputs.find((s) => s.name === t.name);
      if (!spec) throw new ProtocolError(400, `unknown input "${t.name}"; the model's inputs are ${this.inputs.map((s) => `"${s.name}"`).join(', ')}`);
      if (given.has(t.name)) throw new ProtocolError(400, `input "${t.name}" is given more than once`);
      given.add(t.name);
      if (t.datatype !== spec.datatype) throw new ProtocolError(400, `input "${t.name}": datatype ${t.datatype} does not match the model's ${spec.datatype}`);
      const fits = t.shape.length === spec.shape.length && spec.shape.every((d, i) => d < 0 || d === t.shape[i]);
      if (!fits) throw new ProtocolError(400, `input "${t.name}": shape ${shapeText(t.shape)} does not match the model's ${shapeText(spec.shape)}`);
      if (!dataMatches(t.datatype, t.data) || t.data.length !== elementCount(t.shape)) {
        throw new ProtocolError(400, `input "${t.name}": shape ${shapeText(t.shape)} needs ${elementCount(t.shape)} elements, got ${t.data.length}`);
      }
    }
    for (const s of this.inputs) if (!given.has(s.name)) throw new ProtocolError(400, `input "${s.name}" is missing`);
    for (const name of outputNames ?? []) {
      if (!this.outputs.some((o) => o.name === name)) {
        throw new ProtocolError(400, `unknown output "${name}"; the model's outputs are ${this.outputs.map((o) => `"${o.name}"`).join(', ')}`);
      }
    }
  }

  /** Runs the model; outputs in the model's order (or `outputNames`' order when given). */
  infer(inputs: Tensor[], outputNames?: string[]): Promise<Tensor[]> {
    try {
      this.validate(inputs, outputNames);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.closing) return Promise.reject(new Error(`model ${this.file} is closed`));
    if (this.dead) return Promise.reject(this.dead);
    if (this.inline && (!this.worker || this.estimateUs(inputs) <= this.inlineMaxUs)) return this.runInline(inputs, outputNames);
    const worker = this.worker as Worker;
    const feeds: WireTensor[] = [];
    const transfer: ArrayBuffer[] = [];
    for (const t of inputs) {
      const w = toWire(t, V2_TO_ORT[t.datatype] as string);
      feeds.push(w.wire);
      transfer.push(...w.transfer);
    }
    const id = this.nextId++;
    const names = outputNames && outputNames.length > 0 ? [...new Set(outputNames)] : undefined;
    const msg: ToWorker = names ? { op: 'run', id, feeds, outputs: names } : { op: 'run', id, feeds };
    return new Promise<Tensor[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage(msg, transfer);
    }).then((outs) => {
      const order = names ?? this.outputs.map((o) => o.name);
      return order.map((n) => outs.find((o) => o.name === n)).filter((o): o is Tensor => o !== undefined);
    });
  }

  /** a request's cost: the calibrated single-row time scaled by its element count */
  private estimateUs(inputs: Tensor[]): number {
    let n = 0;
    for (const t of inputs) n += t.data.length;
    return ((this.calibratedUs ?? Infinity) * n) / this.calibElements;
  }

  private async runInline(inputs: Tensor[], outputNames?: string[]): Promise<Tensor[]> {
    const { ort, session } = this.inline as { ort: Ort; session: Session };
    const feeds: Record<string, InstanceType<Ort['Tensor']>> = {};
    for (const t of inputs) {
      const data = Array.isArray(t.data) ? t.data.map((b) => b.toString('utf8')) : t.data;
      feeds[t.name] = new ort.Tensor(V2_TO_ORT[t.datatype] as 'float32', data as Float32Array, t.shape);
    }
    const names = outputNames && outputNames.length > 0 ? [...new Set(outputNames)] : undefined;
    let result: Record<string, InstanceType<Ort['Tensor']>>;
    try {
      result = names ? await session.run(feeds, names) : await session.run(feeds);
    } catch (e) {
      throw new ProtocolError(500, `inference failed: ${(e as Error).message}`);
    }
    const order = names ?? this.outputs.map((o) => o.name);
    return order.filter((n) => result[n] !== undefined).map((n) => {
      const t = result[n] as InstanceType<Ort['Tensor']>;
      return fromWire({ name: n, type: t.type, dims: [...t.dims], data: t.data as ArrayBufferView | string[] });
    });
  }

  /** Releases the session and stops the worker; pending inferences are rejected. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = (async () => {
      if (this.inline) await this.inline.session.release().catch(() => undefined);
      if (!this.dead && this.worker) {
        const w = this.worker;
        const closed = new Promise<void>((resolve) => {
          w.once('exit', () => resolve());
          w.on('message', (m: FromWorker) => { if (m.op === 'closed') resolve(); });
        });
        w.postMessage({ op: 'close' } satisfies ToWorker);
        const timer = after(5000, () => void w.terminate());
        await closed;
        timer.clear();
        await w.terminate();
      }
      this.fail(new Error(`model ${this.file} is closed`));
    })();
    return this.closing;
  }

  private onMessage(m: FromWorker): void {
    if (m.op !== 'result' && m.op !== 'error') return;
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.op === 'error') {
      p.reject(new ProtocolError(500, `inference failed: ${m.message}`));
      return;
    }
    try {
      p.resolve(m.outputs.map(fromWire));
    } catch (e) {
      p.reject(e as Error);
    }
  }

  private fail(e: Error): void {
    if (!this.dead) this.dead = e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}
