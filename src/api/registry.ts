// The kinds Skiff serves. Each API group file registers its kinds here; the server, the store client
// and the CLI's discovery all read this one table.
import type { FieldError } from './errors.js';
import type { KObject, StoredObject } from './meta.js';

/**
 * A column of `kubectl get`, declared as a CRD declares its additionalPrinterColumns: the server's
 * Table shows NAME, then these. A `date` column shows the age of an RFC 3339 timestamp.
 */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  /** kubectl's JSONPath, e.g. `.status.conditions[?(@.type=="Ready")].status` */
  jsonPath: string;
  format?: string;
  description?: string;
  /** 0: always shown; 1 and more: only with `-o wide` */
  priority?: number;
}

/**
 * How a version that is served but not stored converts, as a CRD's conversion webhook does: the
 * object client writes every version of the kind in `storageVersion` and answers each request in
 * the version it was made in (src/store/client.ts).
 */
export interface KindConversion {
  /** the version the kind's objects are stored in (its KindDef is registered too) */
  storageVersion: string;
  /** this version's object in the stored version: a new object, the argument left as it was */
  toStorage(obj: KObject): KObject;
  /** a stored object in this version: a new object, the argument left as it was */
  fromStorage(obj: KObject): KObject;
}

export interface KindDef {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  namespaced: boolean;
  /** spec and status are written through separate endpoints */
  hasStatus: boolean;
  /** set on a version that is served but stored as another */
  conversion?: KindConversion;
  /** fills defaults in place (called before validation on create and update) */
  default?(obj: KObject): void;
  /** validates the whole object; `old` is set on update */
  validate?(obj: KObject, old?: StoredObject): FieldError[];
  /**
   * validates a write of the status subresource: `obj` is the object as it would be stored (the live
   * spec and metadata, the new status), `old` the live object; kinds without it take any status
   */
  validateStatus?(obj: KObject, old: StoredObject): FieldError[];
  /** true while deleting must wait for someone to finish it (a running Pod, a Namespace with content) */
  deletionBlocked?(obj: StoredObject, opts: { gracePeriodSeconds?: number }): boolean;
  /**
   * the columns `kubectl get` shows after NAME, for kinds that are CRDs on a cluster; without them
   * an AGE column alone, as the API server gives a CRD that declares none. Kubernetes' own kinds
   * print as kube-apiserver prints them instead (src/server/kube/table-builtin.ts).
   */
  printerColumns?: PrinterColumn[];
  /** the `/scale` subresource, as a CRD's `subresources.scale` declares it (dotted paths into the object) */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
}

export function apiVersionOf(def: KindDef): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

/** `jobs.batch`, `pods` — the resource name kubectl prints. */
export function resourceName(def: KindDef): string {
  return def.group ? `${def.plural}.${def.group}` : def.plural;
}

export class KindRegistry {
  private readonly byKind = new Map<string, KindDef>();
  private readonly byPlural = new Map<string, KindDef>();

  register(...defs: KindDef[]): this {
    for (const def of defs) {
      this.byKind.set(`${apiVersionOf(def)}|${def.kind}`, def);
      this.byPlural.set(`${def.group}|${def.version}|${def.plural}`, def);
    }
    return this;
  }

  forObject(apiVersion: string, kind: string): KindDef | undefined {
    return this.byKind.get(`${apiVersion}|${kind}`);
  }

  /** by the store's key for a kind, `group/plural` */
  forStorageKey(key: string): KindDef | undefined {
    const i = key.indexOf('/');
    const group = key.slice(0, i);
    const plural = key.slice(i + 1);
    return this.all().find((d) => d.group === group && d.plural === plural);
  }

  forResource(group: string, version: string, plural: string): KindDef | undefined {
    return this.byPlural.get(`${group}|${version}|${plural}`);
  }

  all(): KindDef[] {
    return [...this.byKind.values()];
  }

  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const def of this.byKind.values()) {
      const versions = out.get(def.group) ?? [];
      if (!versions.includes(def.version)) versions.push(def.version);
      out.set(def.group, versions);
    }
    return out;
  }
}
