// SQLite implementation of the store: one file, WAL, every write a transaction that also appends to
// the change log that watches replay from.
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { KObject, ObjectKey, StoredObject } from '../../api/meta.js';
import { clone, deepEqual, now } from '../../api/meta.js';
import { matchFields, matchLabels, parseFieldSelector, parseLabelSelector } from '../selectors.js';
import type {
  DeleteOptions, ListOptions, ListResult, ResourceRef, Store, StoreChange, UpdateOptions, WatchEvent, WatchOptions,
} from '../store.js';
import { preconditionFailed, resourceKey, selectedEvent } from '../store.js';

export interface SqliteStoreOptions {
  /** database file; ':memory:' for tests */
  file: string;
  /** how many changes the log keeps for watches to resume from */
  historySize?: number;
  /** a commit failed after listeners saw its writes (disk full, I/O error): by default the process
   *  exits, for a restart to rebuild every view from what is stored */
  onCommitFailure?: (e: Error) => void;
}

interface Row {
  data: string;
}

/** the writes of one SQLite transaction, answered once it commits */
interface Batch {
  waiters: { resolve: () => void; reject: (e: Error) => void }[];
}

const nameChars = 'bcdfghjklmnpqrstvwxz2456789';
function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += nameChars[Math.floor(Math.random() * nameChars.length)];
  return s;
}

function qualified(res: ResourceRef): string {
  return res.group ? `${res.plural}.${res.group}` : res.plural;
}

function notFound(res: ResourceRef, name: string): ApiError {
  return new ApiError(StatusReason.NotFound, `${qualified(res)} "${name}" not found`, { name, group: res.group, kind: res.plural });
}

function specOf(obj: KObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

export class SqliteStore implements Store {
  readonly appliesOnCall = true;
  private readonly db: Database.Database;
  private readonly historySize: number;
  private rv: number;
  private writesSinceTrim = 0;
  private readonly listeners = new Set<(c: StoreChange) => void>();
  private readonly stmts;
  private batch?: Batch;
  private readonly onCommitFailure: (e: Error) => void;

  constructor(opts: SqliteStoreOptions) {
    if (opts.file !== ':memory:') mkdirSync(dirname(opts.file), { recursive: true });
    this.db = new Database(opts.file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    // Objects live in a rowid table keyed by a unique index. Its rows are whole objects (a Pod is a few
    // KB): a WITHOUT ROWID table keeps at most about 1 KB of a row in its leaf and the rest in overflow
    // pages, so each write rewrote two or three pages where a rowid table rewrites one (about 30% of a
    // write's time). A data file of the older layout is moved over once, when it is opened.
    const layout = this.db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'objects'").get();
    if (layout && /WITHOUT ROWID/i.test(layout.sql)) {
      this.db.transaction(() => {
        this.db.exec(`
          CREATE TABLE objects_rowid (
            id INTEGER PRIMARY KEY, res TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL, rv INTEGER NOT NULL, data TEXT NOT NULL);
          INSERT INTO objects_rowid (res, ns, name, uid, rv, data) SELECT res, ns, name, uid, rv, data FROM objects ORDER BY res, ns, name;
          DROP TABLE objects;
          ALTER TABLE objects_rowid RENAME TO objects;
        `);
      })();
    }
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS objects (
        id INTEGER PRIMARY KEY, res TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL, rv INTEGER NOT NULL, data TEXT NOT NULL);
      CREATE UNIQUE INDEX IF NOT EXISTS objects_key ON objects (res, ns, name);
      CREATE UNIQUE INDEX IF NOT EXISTS objects_uid ON objects (uid);
      CREATE TABLE IF NOT EXISTS owners (
        owner TEXT NOT NULL, res TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,
        PRIMARY KEY (owner, res, ns, name)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS changes (
        rv INTEGER PRIMARY KEY, res TEXT NOT NULL, ns TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
    `);
    // each change names its object, so a replayed watch can find what the object was before (a data
    // file from before this column has none for its older changes: those count as not found)
    if (!(this.db.prepare('PRAGMA table_info(changes)').all() as { name: string }[]).some((c) => c.name === 'name')) {
      this.db.exec('ALTER TABLE changes ADD COLUMN name TEXT');
    }
    this.db.exec('CREATE INDEX IF NOT EXISTS changes_object ON changes (res, ns, name, rv)');
    // every write replaces its object's owner rows: without this index that was a scan of the whole
    // table, so writes slowed as owned objects grew (a 1,000-task Run's Pods and RunTasks)
    this.db.exec('CREATE INDEX IF NOT EXISTS owners_object ON owners (res, ns, name)');
    this.historySize = opts.historySize ?? 50_000;
    this.onCommitFailure = opts.onCommitFailure ?? ((e) => {
      process.stderr.write(`skiff: the store could not commit a write (${e.message}); stopping, so that a restart reconciles from what is stored\n`);
      process.exit(70);
    });
    this.stmts = {
      get: this.db.prepare<[string, string, string], Row>('SELECT data FROM objects WHERE res = ? AND ns = ? AND name = ?'),
      exists: this.db.prepare<[string, string, string], { one: number }>('SELECT 1 AS one FROM objects WHERE res = ? AND ns = ? AND name = ?'),
      insert: this.db.prepare('INSERT INTO objects (res, ns, name, uid, rv, data) VALUES (?, ?, ?, ?, ?, ?)'),
      update: this.db.prepare('UPDATE objects SET rv = ?, data = ? WHERE res = ? AND ns = ? AND name = ?'),
      remove: this.db.prepare('DELETE FROM objects WHERE res = ? AND ns = ? AND name = ?'),
      listNs: this.db.prepare<[string, string, string, number], Row>('SELECT data FROM objects WHERE res = ? AND ns = ? AND name > ? ORDER BY name LIMIT ?'),
      listAll: this.db.prepare<[string, string, string, number], Row>('SELECT data FROM objects WHERE res = ? AND (ns, name) > (?, ?) ORDER BY ns, name LIMIT ?'),
      moreNs: this.db.prepare<[string, string, string], { one: number }>('SELECT 1 AS one FROM objects WHERE res = ? AND ns = ? AND name > ? LIMIT 1'),
      moreAll: this.db.prepare<[string, string, string], { one: number }>('SELECT 1 AS one FROM objects WHERE res = ? AND (ns, name) > (?, ?) LIMIT 1'),
      addOwner: this.db.prepare('INSERT OR IGNORE INTO owners (owner, res, ns, name) VALUES (?, ?, ?, ?)'),
      dropOwners: this.db.prepare('DELETE FROM owners WHERE res = ? AND ns = ? AND name = ?'),
      dependents: this.db.prepare<[string], { res: string; ns: string; name: string }>('SELECT res, ns, name FROM owners WHERE owner = ?'),
      ownerUids: this.db.prepare<[], { owner: string }>('SELECT DISTINCT owner FROM owners'),
      uidExists: this.db.prepare<[string], { one: number }>('SELECT 1 AS one FROM objects WHERE uid = ?'),
      change: this.db.prepare('INSERT INTO changes (rv, res, ns, name, type, data) VALUES (?, ?, ?, ?, ?, ?)'),
      changedSince: this.db.prepare<[string, number], { one: number }>('SELECT 1 AS one FROM changes WHERE res = ? AND rv > ? LIMIT 1'),
      previousChange: this.db.prepare<[string, string, string, number], { type: string; data: string }>('SELECT type, data FROM changes WHERE res = ? AND ns = ? AND name = ? AND rv < ? ORDER BY rv DESC LIMIT 1'),
      changesSince: this.db.prepare<[string, number], { type: string; ns: string; data: string }>('SELECT type, ns, data FROM changes WHERE res = ? AND rv > ? ORDER BY rv'),
      oldestChange: this.db.prepare<[], { rv: number | null }>('SELECT min(rv) AS rv FROM changes'),
      trim: this.db.prepare('DELETE FROM changes WHERE rv <= ?'),
      saveRv: this.db.prepare("INSERT INTO counters (name, value) VALUES ('rv', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value"),
      loadRv: this.db.prepare<[], { value: number | null }>("SELECT max(coalesce((SELECT value FROM counters WHERE name = 'rv'), 0), coalesce((SELECT max(rv) FROM changes), 0), coalesce((SELECT max(rv) FROM objects), 0)) AS value"),
    };
    // the newest change always stays in the change log (trimming keeps the last historySize), so the
    // counter is written only when the log is trimmed, not on every write
    this.rv = this.stmts.loadRv.get()?.value ?? 0;
  }

  resourceVersion(): string {
    return String(this.rv);
  }

  private read(res: ResourceRef, ns: string, name: string): StoredObject | undefined {
    const row = this.stmts.get.get(resourceKey(res), ns, name);
    return row ? (JSON.parse(row.data) as StoredObject) : undefined;
  }

  private exists(res: ResourceRef, ns: string, name: string): boolean {
    return this.stmts.exists.get(resourceKey(res), ns, name) !== undefined;
  }

  private nsOf(res: ResourceRef, key: ObjectKey | KObject['metadata']): string {
    if (!res.namespaced) return '';
    if (!key.namespace) throw new ApiError(StatusReason.BadRequest, `${qualified(res)}: a namespace is required`);
    return key.namespace;
  }

  /** Records a change: bumps the version, logs it and tells listeners once the transaction commits. */
  private record(res: ResourceRef, type: WatchEvent['type'], obj: StoredObject, pending: StoreChange[], data = JSON.stringify(obj), prev?: StoredObject): void {
    this.stmts.change.run(this.rv, resourceKey(res), obj.metadata.namespace ?? '', obj.metadata.name, type, data);
    pending.push(prev ? { resource: resourceKey(res), type, object: obj, prev } : { resource: resourceKey(res), type, object: obj });
  }

  /** the oldest version a watch or a continued list can still start from */
  private oldestKept(): number {
    return (this.stmts.oldestChange.get()?.rv ?? this.rv + 1) - 1;
  }

  private expired(rv: number): boolean {
    return rv < this.rv && rv < this.oldestKept();
  }

  private indexOwners(res: ResourceRef, obj: StoredObject): void {
    const ns = obj.metadata.namespace ?? '';
    this.stmts.dropOwners.run(resourceKey(res), ns, obj.metadata.name);
    for (const ref of obj.metadata.ownerReferences ?? []) this.stmts.addOwner.run(ref.uid, resourceKey(res), ns, obj.metadata.name);
  }

  private emit(pending: StoreChange[]): void {
    for (const change of pending) for (const l of this.listeners) l(change);
    if (++this.writesSinceTrim >= Math.min(1000, this.historySize)) {
      this.writesSinceTrim = 0;
      this.stmts.saveRv.run(this.rv);
      this.stmts.trim.run(this.rv - this.historySize);
    }
  }

  /**
   * Runs one write in a savepoint of the open batch (a transaction of its own when none is open) and
   * tells listeners at once, as before. Writes made in the same turn of the event loop share one
   * SQLite transaction, committed by setImmediate: a commit (its WAL frames, now and then a checkpoint)
   * cost about as much as the write itself, once per write. The caller's promise settles only after
   * the commit, so what was answered to a client is on disk. What listeners saw and what later writes
   * built on are in the same batch or a later one, so a crash before a commit loses those together.
   */
  private transact<T>(fn: (pending: StoreChange[]) => T): Promise<T> {
    const pending: StoreChange[] = [];
    const saved = this.rv;
    const batch = this.batch ?? this.openBatch();
    let out: T;
    try {
      out = this.db.transaction(() => fn(pending))();
    } catch (e) {
      this.rv = saved;
      return Promise.reject(e);
    }
    this.emit(pending);
    return new Promise<T>((resolve, reject) => batch.waiters.push({ resolve: () => resolve(out), reject }));
  }

  private openBatch(): Batch {
    this.db.exec('BEGIN');
    const batch: Batch = { waiters: [] };
    this.batch = batch;
    setImmediate(() => this.commit(batch));
    return batch;
  }

  private commit(batch: Batch): void {
    if (this.batch !== batch) return;
    this.batch = undefined;
    try {
      this.db.exec('COMMIT');
    } catch (e) {
      // Listeners have seen these writes and acted on them; what is on disk no longer says so. A
      // restart rebuilds every controller's view from the file, so the server stops rather than run on.
      try { this.db.exec('ROLLBACK'); } catch { /* already rolled back */ }
      for (const w of batch.waiters) w.reject(e as Error);
      this.onCommitFailure(e as Error);
      return;
    }
    for (const w of batch.waiters) w.resolve();
  }

  async create(res: ResourceRef, input: KObject): Promise<StoredObject> {
    return this.transact((pending) => {
      const obj = clone(input) as StoredObject;
      const meta = obj.metadata;
      const ns = this.nsOf(res, meta);
      if (!res.namespaced) delete meta.namespace;
      if (!meta.name) {
        if (!meta.generateName) {
          throw ApiError.invalid(res.kind, res.group, '', [{ field: 'metadata.name', type: 'FieldValueRequired', message: 'Required value: name or generateName is required' }]);
        }
        let tries = 0;
        do meta.name = meta.generateName + randomSuffix();
        while (this.exists(res, ns, meta.name) && ++tries < 8);
      }
      if (this.exists(res, ns, meta.name)) {
        throw new ApiError(StatusReason.AlreadyExists, `${qualified(res)} "${meta.name}" already exists`, { name: meta.name, group: res.group, kind: res.plural });
      }
      meta.uid ||= randomUUID();
      meta.creationTimestamp = now();
      meta.generation = 1;
      delete meta.deletionTimestamp;
      meta.resourceVersion = String(++this.rv);
      const data = JSON.stringify(obj);
      this.stmts.insert.run(resourceKey(res), ns, meta.name, meta.uid, this.rv, data);
      this.indexOwners(res, obj);
      this.record(res, 'ADDED', obj, pending, data);
      return obj;
    });
  }

  async get(res: ResourceRef, key: ObjectKey): Promise<StoredObject> {
    const obj = this.read(res, this.nsOf(res, key), key.name);
    if (!obj) throw notFound(res, key.name);
    return obj;
  }

  async list(res: ResourceRef, opts: ListOptions = {}): Promise<ListResult> {
    const labels = parseLabelSelector(opts.labelSelector);
    const fields = parseFieldSelector(opts.fieldSelector);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const key = resourceKey(res);
    let after = { ns: '', name: '' };
    // the version the first page was listed at travels in the token, so a later page can tell when
    // the history since then is gone, as kube-apiserver's compacted continue does
    let startRv = this.rv;
    let listRv = String(this.rv);
    if (opts.continue) {
      const token = decodeContinue(opts.continue, res.namespaced);
      if (opts.resourceVersion && opts.resourceVersion !== '0') throw new ApiError(StatusReason.BadRequest, 'specifying resource version is not allowed when using continue');
      if (token.rv > 0 && this.expired(token.rv)) {
        const err = new ApiError(StatusReason.Gone, continueExpired);
        err.continueToken = encodeContinue(token.after, res.namespaced, -1);
        throw err;
      }
      after = token.after;
      if (token.rv > 0) startRv = token.rv;
    } else if (opts.resourceVersion && opts.resourceVersion !== '0') {
      const wanted = parseResourceVersion(opts.resourceVersion);
      if (wanted > this.rv) throw tooLargeResourceVersion(wanted, this.rv);
      if (opts.resourceVersionMatch === 'Exact' && wanted !== this.rv) {
        // the stored state is the state at `wanted` when nothing of this kind changed since; older
        // snapshots are not kept
        if (this.expired(wanted) || this.stmts.changedSince.get(key, wanted)) throw new ApiError(StatusReason.Gone, 'The resourceVersion for the provided list is too old.');
        listRv = String(wanted);
        startRv = wanted;
      }
    }
    const scoped = res.namespaced && opts.namespace !== undefined && opts.namespace !== '';
    const items: StoredObject[] = [];
    const batch = Math.min(limit === Infinity ? 1000 : Math.max(limit, 100), 1000);
    let more = true;
    let last = after;
    let exhausted = false;
    // `metadata.name=X` in one namespace (how a page watches one object) reads that one row rather
    // than parsing every object of the kind to compare names: a Run's page among 1,000 Runs
    const byName = scoped ? fields.find((f) => f.key === 'metadata.name' && f.op === '=') : undefined;
    const wantedName = byName && 'value' in byName ? String(byName.value) : undefined;
    if (wantedName !== undefined) {
      more = false;
      const row = wantedName > last.name ? this.stmts.get.get(key, opts.namespace ?? '', wantedName) : undefined;
      const obj = row ? (JSON.parse(row.data) as StoredObject) : undefined;
      if (obj && (!labels.length || matchLabels(labels, obj.metadata.labels)) && matchFields(fields, obj)) items.push(obj);
      if (items.length < limit) exhausted = true;
    }
    // Read in batches so a selective query on a big kind stops as soon as the page is full.
    while (more && items.length < limit) {
      const rows = scoped
        ? this.stmts.listNs.all(key, opts.namespace ?? '', last.name, batch)
        : this.stmts.listAll.all(key, last.ns, last.name, batch);
      if (rows.length < batch) more = false;
      for (let i = 0; i < rows.length; i++) {
        const obj = JSON.parse((rows[i] as Row).data) as StoredObject;
        last = { ns: obj.metadata.namespace ?? '', name: obj.metadata.name };
        if (labels.length && !matchLabels(labels, obj.metadata.labels)) continue;
        if (fields.length && !matchFields(fields, obj)) continue;
        items.push(obj);
        if (items.length >= limit) {
          if (i === rows.length - 1 && !more) exhausted = true;
          break;
        }
      }
      if (!more && items.length < limit) exhausted = true;
    }
    const result: ListResult = { items, resourceVersion: listRv };
    if (items.length >= limit && !exhausted) {
      const lastItem = items[items.length - 1] as StoredObject;
      const pos = { ns: lastItem.metadata.namespace ?? '', name: lastItem.metadata.name };
      // as in Kubernetes, a continue token means more objects are stored, not that more will match
      const more = scoped ? this.stmts.moreNs.get(key, pos.ns, pos.name) : this.stmts.moreAll.get(key, pos.ns, pos.name);
      if (more) result.continue = encodeContinue(pos, res.namespaced, startRv);
    }
    return result;
  }

  async update(res: ResourceRef, input: KObject, opts: UpdateOptions = {}): Promise<StoredObject> {
    return this.transact((pending) => {
      const ns = this.nsOf(res, input.metadata);
      const name = input.metadata.name ?? '';
      const old = this.read(res, ns, name);
      if (!old) throw notFound(res, name);
      const wanted = input.metadata.resourceVersion;
      if (wanted && wanted !== old.metadata.resourceVersion) {
        throw new ApiError(StatusReason.Conflict, `Operation cannot be fulfilled on ${qualified(res)} "${name}": the object has been modified; please apply your changes to the latest version and try again`, { name, group: res.group, kind: res.plural });
      }
      if (input.metadata.uid && input.metadata.uid !== old.metadata.uid) {
        throw preconditionFailed(res, ns, name, 'UID', input.metadata.uid, old.metadata.uid);
      }
      let obj: StoredObject;
      if (opts.subresource === 'status') {
        obj = clone(old);
        obj.status = clone(input.status);
      } else {
        obj = clone(input) as StoredObject;
        if (res.hasStatus && opts.subresource !== 'binding') obj.status = clone(old.status);
        const m = obj.metadata;
        // the server owns these fields
        m.uid = old.metadata.uid;
        m.creationTimestamp = old.metadata.creationTimestamp;
        m.generation = old.metadata.generation ?? 1;
        if (!res.namespaced) delete m.namespace;
        else m.namespace = ns;
        if (old.metadata.deletionTimestamp) m.deletionTimestamp = old.metadata.deletionTimestamp;
        else delete m.deletionTimestamp;
        if (old.metadata.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
        if (old.metadata.deletionTimestamp) {
          const added = (m.finalizers ?? []).filter((f) => !(old.metadata.finalizers ?? []).includes(f));
          if (added.length) throw new ApiError(StatusReason.Invalid, `${qualified(res)} "${name}" is being deleted: no new finalizers can be added (${added.join(', ')})`);
        }
        if (!deepEqual(specOf(obj), specOf(old))) m.generation = (old.metadata.generation ?? 1) + 1;
      }
      obj.metadata.resourceVersion = old.metadata.resourceVersion;
      if (deepEqual(obj, old)) return old; // a no-op write bumps nothing, as in Kubernetes
      obj.metadata.resourceVersion = String(++this.rv);
      if (obj.metadata.deletionTimestamp && (obj.metadata.finalizers ?? []).length === 0 && !res.deletionBlocked?.(obj, {})) {
        this.stmts.remove.run(resourceKey(res), ns, name);
        this.stmts.dropOwners.run(resourceKey(res), ns, name);
        this.record(res, 'DELETED', obj, pending);
        return obj;
      }
      const data = JSON.stringify(obj);
      this.stmts.update.run(this.rv, data, resourceKey(res), ns, name);
      if (!deepEqual(obj.metadata.ownerReferences, old.metadata.ownerReferences)) this.indexOwners(res, obj);
      this.record(res, 'MODIFIED', obj, pending, data, old);
      return obj;
    });
  }

  async delete(res: ResourceRef, key: ObjectKey, opts: DeleteOptions = {}): Promise<StoredObject> {
    return this.transact((pending) => {
      const ns = this.nsOf(res, key);
      const old = this.read(res, ns, key.name);
      if (!old) throw notFound(res, key.name);
      if (opts.uid && opts.uid !== old.metadata.uid) {
        throw preconditionFailed(res, ns, key.name, 'UID', opts.uid, old.metadata.uid);
      }
      if (opts.resourceVersion && opts.resourceVersion !== old.metadata.resourceVersion) {
        throw preconditionFailed(res, ns, key.name, 'ResourceVersion', opts.resourceVersion, old.metadata.resourceVersion);
      }
      const obj = clone(old);
      const finalizers = [...(obj.metadata.finalizers ?? [])];
      if (opts.propagationPolicy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
      if (opts.propagationPolicy === 'Foreground' && !finalizers.includes('foregroundDeletion')) finalizers.push('foregroundDeletion');
      const blocked = finalizers.length > 0 || (res.deletionBlocked?.(obj, opts) ?? false);
      if (blocked) {
        if (obj.metadata.deletionTimestamp && opts.gracePeriodSeconds === undefined) return old;
        obj.metadata.finalizers = finalizers.length ? finalizers : undefined;
        if (!obj.metadata.finalizers) delete obj.metadata.finalizers;
        obj.metadata.deletionTimestamp ??= now();
        if (opts.gracePeriodSeconds !== undefined) obj.metadata.deletionGracePeriodSeconds = opts.gracePeriodSeconds;
        obj.metadata.generation = (obj.metadata.generation ?? 1) + 1;
        obj.metadata.resourceVersion = String(++this.rv);
        const data = JSON.stringify(obj);
        this.stmts.update.run(this.rv, data, resourceKey(res), ns, key.name);
        this.record(res, 'MODIFIED', obj, pending, data, old);
        return obj;
      }
      obj.metadata.deletionTimestamp ??= now();
      obj.metadata.resourceVersion = String(++this.rv);
      this.stmts.remove.run(resourceKey(res), ns, key.name);
      this.stmts.dropOwners.run(resourceKey(res), ns, key.name);
      this.record(res, 'DELETED', obj, pending);
      return obj;
    });
  }

  watch(res: ResourceRef, opts: WatchOptions, onEvent: (e: WatchEvent) => void): { stop(): void } {
    const labels = parseLabelSelector(opts.labelSelector);
    const fields = parseFieldSelector(opts.fieldSelector);
    const ns = res.namespaced ? opts.namespace ?? '' : '';
    const key = resourceKey(res);
    const wanted = (o: StoredObject): boolean =>
      (!ns || (o.metadata.namespace ?? '') === ns) && matchLabels(labels, o.metadata.labels) && matchFields(fields, o);
    const backlog: WatchEvent[] = [];
    const from = opts.resourceVersion && opts.resourceVersion !== '0' ? Number(opts.resourceVersion) : undefined;
    if (from !== undefined) {
      if (!Number.isInteger(from) || from < 0) throw new ApiError(StatusReason.BadRequest, `invalid resourceVersion "${opts.resourceVersion}"`);
      if (this.expired(from)) throw new ApiError(StatusReason.Gone, `too old resource version: ${from} (${this.oldestKept()})`);
      // a replayed change that takes an object out of the selection is a DELETED, as it is live; what
      // the object was before comes from this replay or, for its first change here, from the log
      const matched = new Map<string, boolean>();
      for (const row of this.stmts.changesSince.all(key, from)) {
        const o = JSON.parse(row.data) as StoredObject;
        const k = `${row.ns}/${o.metadata.name}`;
        const now = wanted(o);
        if (row.type === 'MODIFIED' && (labels.length || fields.length)) {
          let before = matched.get(k);
          if (before === undefined) {
            const prev = this.stmts.previousChange.get(key, row.ns, o.metadata.name, Number(o.metadata.resourceVersion));
            // not in the kept log: it may have matched, and a DELETED for an object a client never had
            // is harmless where a missing one is not
            before = prev === undefined || (prev.type !== 'DELETED' && wanted(JSON.parse(prev.data) as StoredObject));
          }
          if (now) backlog.push({ type: before ? 'MODIFIED' : 'ADDED', object: o });
          else if (before) backlog.push({ type: 'DELETED', object: o });
        } else if (now) {
          backlog.push({ type: row.type as WatchEvent['type'], object: o });
        }
        matched.set(k, row.type !== 'DELETED' && now);
      }
    } else {
      const current = this.listNow(res, { namespace: ns || undefined, labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector });
      for (const o of current.items) backlog.push({ type: 'ADDED', object: o });
    }
    let stopped = false;
    // as kube-apiserver's watch cache does: a change that moves an object into the selection is
    // ADDED, one that moves it out is DELETED (the object as it was, at the new version)
    const listener = (c: StoreChange): void => {
      if (stopped || c.resource !== key) return;
      const e = selectedEvent(c, wanted);
      if (e) onEvent(e);
    };
    this.listeners.add(listener);
    // Deliver the backlog before any live change; both run on this thread, so nothing slips between.
    for (const e of backlog) onEvent(e);
    return {
      stop: () => {
        stopped = true;
        this.listeners.delete(listener);
      },
    };
  }

  private listNow(res: ResourceRef, opts: ListOptions): ListResult {
    const labels = parseLabelSelector(opts.labelSelector);
    const fields = parseFieldSelector(opts.fieldSelector);
    const key = resourceKey(res);
    const rows = res.namespaced && opts.namespace
      ? this.stmts.listNs.all(key, opts.namespace, '', 1e9)
      : this.stmts.listAll.all(key, '', '', 1e9);
    const items = rows.map((r) => JSON.parse(r.data) as StoredObject).filter((o) => matchLabels(labels, o.metadata.labels) && matchFields(fields, o));
    return { items, resourceVersion: String(this.rv) };
  }

  subscribe(onChange: (c: StoreChange) => void): { stop(): void } {
    this.listeners.add(onChange);
    return { stop: () => this.listeners.delete(onChange) };
  }

  async dependents(ownerUid: string): Promise<{ resource: string; namespace: string; name: string }[]> {
    return this.stmts.dependents.all(ownerUid).map((r) => ({ resource: r.res, namespace: r.ns, name: r.name }));
  }

  async ownerUids(): Promise<string[]> {
    return this.stmts.ownerUids.all().map((r) => r.owner);
  }

  async uidExists(uid: string): Promise<boolean> {
    return this.stmts.uidExists.get(uid) !== undefined;
  }

  async close(): Promise<void> {
    if (this.batch) this.commit(this.batch);
    this.listeners.clear();
    this.db.close();
  }
}

const continueExpired = 'The provided continue parameter is too old to display a consistent list result. You can start a ' +
  'new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the ' +
  'results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, ' +
  'or deleted between the time the first chunk was returned and now may show up in the list.';

/** kube-apiserver's continue token: base64url JSON of {v, rv, start}, start the key after the last item */
function encodeContinue(pos: { ns: string; name: string }, namespaced: boolean, rv: number): string {
  const start = (namespaced ? `${pos.ns}/${pos.name}` : pos.name) + '\u0000';
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64url');
}

function decodeContinue(token: string, namespaced: boolean): { after: { ns: string; name: string }; rv: number } {
  const invalid = (why: string): ApiError => new ApiError(StatusReason.BadRequest, `invalid continue token: continue key is not valid${why}`);
  let parsed: { v?: unknown; rv?: unknown; start?: unknown };
  try {
    if (!/^[A-Za-z0-9_-]*$/.test(token)) throw new Error('illegal base64 data');
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as typeof parsed;
    if (parsed === null || typeof parsed !== 'object') throw new Error('not an object');
  } catch (e) {
    throw invalid(`: ${(e as Error).message}`);
  }
  if (parsed.v !== 'meta.k8s.io/v1') throw invalid(`: server does not recognize this encoded version ${String(parsed.v ?? '')}`);
  if (typeof parsed.rv !== 'number' || !Number.isInteger(parsed.rv) || parsed.rv === 0) throw invalid(': incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof parsed.start !== 'string' || parsed.start === '') throw invalid(': encoded start key empty (version meta.k8s.io/v1)');
  const key = parsed.start.replace(/\u0000$/, '');
  if (key.split('/').some((p) => p === '..' || p === '.')) throw invalid(`: ${parsed.start}`);
  if (!namespaced) return { after: { ns: '', name: key }, rv: parsed.rv };
  const i = key.indexOf('/');
  return { after: i < 0 ? { ns: key, name: '' } : { ns: key.slice(0, i), name: key.slice(i + 1) }, rv: parsed.rv };
}

function parseResourceVersion(v: string): number {
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw new ApiError(StatusReason.BadRequest, `invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(v)}: strconv.ParseUint: parsing ${JSON.stringify(v)}: invalid syntax`);
  }
  return Number(v);
}

/** kube-apiserver's answer to a version newer than any it has: 504, to retry in a second */
function tooLargeResourceVersion(wanted: number, current: number): ApiError {
  return new ApiError(StatusReason.Timeout, `Timeout: Too large resource version: ${wanted}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version', field: '' }],
    retryAfterSeconds: 1,
  });
}
