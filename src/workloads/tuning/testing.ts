// Test builders for the Trial controller: a defaulted Trial over a batch Job, Pod logs and files
// scripted at the substrate's seam, and TensorFlow event files written byte for byte. Only tests
// import this file.
import type { StoredObject } from '../../api/meta.js';
import type { EarlyStoppingRule, MetricsCollectorSpec, ObjectiveSpec, Trial } from '../../api/tuning-types.js';
import { TuningApiVersion, TuningLabels } from '../../api/tuning-types.js';
import type { PodFile, PodFileSource, PodLogOptions, PodLogSource } from '../../substrate/substrate.js';
import { maskedCrc } from './tfevent.js';

export interface TrialOptions {
  namespace?: string;
  command?: string[];
  objective?: ObjectiveSpec;
  metricsCollector?: MetricsCollectorSpec;
  earlyStoppingRules?: EarlyStoppingRule[];
  retainRun?: boolean;
  primaryContainerName?: string;
  backoffLimit?: number;
  labels?: Record<string, string>;
}

/** a Trial as the Experiment controller makes it (defaulted): a batch Job with one container `training` */
export function makeTrial(name: string, o: TrialOptions = {}): Trial {
  return {
    apiVersion: TuningApiVersion, kind: 'Trial',
    metadata: { name, namespace: o.namespace ?? 'default', labels: { [TuningLabels.experiment]: 'exp', ...(o.labels ?? {}) } },
    spec: {
      objective: o.objective ?? { type: 'minimize', objectiveMetricName: 'loss', additionalMetricNames: ['accuracy'] },
      parameterAssignments: [{ name: 'lr', value: '0.01' }],
      earlyStoppingRules: o.earlyStoppingRules,
      runSpec: {
        apiVersion: 'batch/v1', kind: 'Job', metadata: {},
        spec: {
          backoffLimit: o.backoffLimit ?? 0,
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'training', image: 'python:3.11', command: o.command ?? ['python3', 'train.py', '--lr=0.01'] }] } },
        },
      },
      retainRun: o.retainRun ?? false,
      metricsCollector: o.metricsCollector ?? { collector: { kind: 'StdOut' } },
      primaryContainerName: o.primaryContainerName ?? 'training',
      successCondition: 'status.conditions.#(type=="Complete")#|#(status=="True")#',
      failureCondition: 'status.conditions.#(type=="Failed")#|#(status=="True")#',
    },
  };
}

/** Pod logs scripted by a test: what each Pod's container has printed so far */
export class ScriptedPodLogs implements PodLogSource {
  /** "pod/container" or "pod" → the text */
  readonly text = new Map<string, string>();
  /** how many whole-log reads were made */
  reads = 0;

  set(pod: string, text: string, container?: string): void {
    this.text.set(container ? `${pod}/${container}` : pod, text);
  }

  async logs(pod: StoredObject, opts: PodLogOptions, signal: AbortSignal): Promise<AsyncIterable<string>> {
    const key = opts.container ? `${pod.metadata.name}/${opts.container}` : pod.metadata.name;
    const text = this.text.get(key) ?? this.text.get(pod.metadata.name);
    if (text === undefined) throw new Error(`container "${opts.container}" in pod "${pod.metadata.name}" is waiting to start: ContainerCreating`);
    if (!opts.follow) this.reads++;
    return (async function* () {
      if (!signal.aborted) yield text;
    })();
  }
}

/** files scripted by a test: pod → path → bytes; a directory read returns what is under it */
export class ScriptedPodFiles implements PodFileSource {
  readonly files = new Map<string, Map<string, Buffer>>();

  set(pod: string, path: string, data: string | Buffer): void {
    const m = this.files.get(pod) ?? new Map<string, Buffer>();
    m.set(path, Buffer.isBuffer(data) ? data : Buffer.from(data));
    this.files.set(pod, m);
  }

  async readPodFiles(pod: StoredObject, _container: string, path: string): Promise<PodFile[]> {
    const m = this.files.get(pod.metadata.name) ?? new Map<string, Buffer>();
    const dir = path.replace(/\/+$/, '');
    return [...m.entries()].filter(([p]) => p === dir || p.startsWith(`${dir}/`)).sort(([a], [b]) => a.localeCompare(b)).map(([p, data]) => ({ path: p, data }));
  }
}

// ---- TensorFlow event files, byte for byte -----------------------------------------------------

function varint(n: number | bigint): Buffer {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
}

function key(no: number, wire: number): Buffer {
  return varint((no << 3) | wire);
}

function bytesField(no: number, data: Buffer): Buffer {
  return Buffer.concat([key(no, 2), varint(data.length), data]);
}

function doubleField(no: number, v: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(v);
  return Buffer.concat([key(no, 1), b]);
}

function floatField(no: number, v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeFloatLE(v);
  return Buffer.concat([key(no, 5), b]);
}

export type EventValue = { tag: string; simple: number } | { tag: string; tensorFloat: number } | { tag: string; tensorDouble: number };

/** an Event message: wall_time = 1, step = 2, summary = 5 { value = 1 { tag = 1, simple_value = 2, tensor = 8 } } */
export function encodeEvent(wallTime: number, step: number, values: EventValue[]): Buffer {
  const vals = values.map((v) => {
    let payload: Buffer;
    if ('simple' in v) payload = floatField(2, v.simple);
    else if ('tensorFloat' in v) {
      // TensorProto { dtype = 1 (DT_FLOAT), tensor_shape = 2 {}, float_val = 5 packed }
      const f = Buffer.alloc(4);
      f.writeFloatLE(v.tensorFloat);
      payload = bytesField(8, Buffer.concat([key(1, 0), varint(1), bytesField(2, Buffer.alloc(0)), bytesField(5, f)]));
    } else {
      // TensorProto { dtype = 2 (DT_DOUBLE), tensor_content = 4 }
      const d = Buffer.alloc(8);
      d.writeDoubleLE(v.tensorDouble);
      payload = bytesField(8, Buffer.concat([key(1, 0), varint(2), bytesField(4, d)]));
    }
    return bytesField(1, Buffer.concat([bytesField(1, Buffer.from(v.tag)), payload]));
  });
  const parts = [doubleField(1, wallTime), Buffer.concat([key(2, 0), varint(step)])];
  if (vals.length) parts.push(bytesField(5, Buffer.concat(vals)));
  return Buffer.concat(parts);
}

/** an event file's first record, as every writer starts: file_version = 3 */
export function fileVersionEvent(wallTime: number): Buffer {
  return Buffer.concat([doubleField(1, wallTime), bytesField(3, Buffer.from('brain.Event:2'))]);
}

/** TFRecord framing of records */
export function tfRecords(records: Buffer[]): Buffer {
  return Buffer.concat(records.map((data) => {
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(data.length));
    const lenCrc = Buffer.alloc(4);
    lenCrc.writeUInt32LE(maskedCrc(len));
    const dataCrc = Buffer.alloc(4);
    dataCrc.writeUInt32LE(maskedCrc(data));
    return Buffer.concat([len, lenCrc, data, dataCrc]);
  }));
}
