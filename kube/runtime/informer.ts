import type { Logger } from "pino";
import { isGone, type KubeClient, type KubeObject, type WatchEvent } from "./client.ts";

/**
 * A list-watch cache of one resource type, typed: each object is decoded once, as it enters the cache (`transform`),
 * and readers get the decoded object. It lists, then watches from the list's resourceVersion; on 410 Gone it lists
 * again (and reports what changed meanwhile); on any other error it reconnects with exponential backoff; a watch that
 * goes silent for longer than `stallTimeoutMs` (no event, not even a bookmark) is cut and restarted.
 */

export type InformerEvent = "add" | "update" | "delete";
export type InformerHandler<T> = (event: InformerEvent, object: T, previous?: T) => void;

export interface InformerOptions<T extends KubeObject> {
  client: Pick<KubeClient, "list" | "watch">;
  /** Collection path, e.g. `/apis/batch/v1/namespaces/team-a/jobs` or all namespaces `/apis/batch/v1/jobs`. */
  path: string;
  labelSelector?: string;
  /** A field selector, as the apiserver knows them (e.g. `status.phase!=Pending` for pods). */
  fieldSelector?: string;
  log: Logger;
  /** Secondary index keys of an object (e.g. its owner's namespace/name), for byIndex(). */
  indexKeys?: (object: T) => string[];
  /** The server ends each watch after about this long; the informer opens the next one from where it stopped. */
  watchTimeoutSeconds?: number;
  /** A watch with no traffic for this long is treated as stalled. */
  stallTimeoutMs?: number;
  backoff?: { initialMs: number; maxMs: number };
  pageSize?: number;
  /**
   * What the cache keeps of each object, decoded (as client-go's SetTransform): applied once to every listed, watched
   * and upserted object before it is stored or handed to handlers, so fields nobody reads (managedFields, a Job's pod
   * template) cost no memory and readers get typed objects (an object that does not decode can be kept as
   * Undecodable, undecodable.ts). It must keep metadata.name, namespace and resourceVersion, and what `indexKeys`
   * reads. Without it the objects are kept as they come (T must then be what the apiserver sends).
   */
  transform?: (object: KubeObject) => T;
  /**
   * Where the cache's keys (`<namespace>/<name>`, and those of `indexKeys`) come from, e.g. a StringPool's intern: a
   * key is built anew from each event's object, and several caches key by the same names (an object, and its
   * children's index).
   */
  keys?: (key: string) => string;
}

/** Drops metadata.managedFields (server-side apply bookkeeping, often the largest part of an object): no reader of
 * the caches uses it. */
export function withoutManagedFields<T extends KubeObject>(object: T): T {
  if (!object.metadata || !("managedFields" in object.metadata)) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

/** The cache's key of an object, `<namespace>/<name>`; the controller's work queues hold the same keys. */
export const cacheKey = (namespace: string, name: string) => `${namespace}/${name}`;
export const objectKey = (o: KubeObject) => cacheKey(o.metadata?.namespace ?? "", o.metadata?.name ?? "");

/** The namespace and name in a cache key. */
export function splitKey(key: string): [namespace: string, name: string] {
  const slash = key.indexOf("/");
  return [key.slice(0, slash), key.slice(slash + 1)];
}

/** The same version of an object: the same (non-empty) resourceVersion. */
function sameVersion(candidate: KubeObject, current: KubeObject): boolean {
  const rv = candidate.metadata?.resourceVersion;
  return !!rv && rv === current.metadata?.resourceVersion;
}

/** Compares etcd resourceVersions; an opaque one (not an integer) never counts as older. */
function isOlder(candidate: KubeObject, current: KubeObject): boolean {
  const a = candidate.metadata?.resourceVersion;
  const b = current.metadata?.resourceVersion;
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}

export class Informer<T extends KubeObject> {
  private readonly opts: InformerOptions<T>;
  private readonly store = new Map<string, T>();
  /** Index key → the keys of its objects: one key as itself (the common case: a Set costs ~150 bytes), more in a Set. */
  private readonly index = new Map<string, string | Set<string>>();
  private readonly handlers: InformerHandler<T>[] = [];
  private resourceVersion = "";
  private stopped = false;
  private abort: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private wake: (() => void) | undefined;
  /** Last time the watch showed any sign of life (ms since epoch); the health check reads it. */
  lastActivity = Date.now();
  relists = 0;
  stalls = 0;

  constructor(opts: InformerOptions<T>) {
    this.opts = opts;
  }

  on(handler: InformerHandler<T>): void {
    this.handlers.push(handler);
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  /** Starts the loop; resolves once the first list has filled the cache. */
  start(): Promise<void> {
    this.stopped = false;
    this.loop ??= this.run();
    return this.waitForSync();
  }

  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    this.wake?.();
    await this.loop;
    this.loop = undefined;
  }

  get(namespace: string, name: string): T | undefined {
    return this.store.get(cacheKey(namespace, name));
  }

  list(namespace?: string): T[] {
    const all = [...this.store.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata?.namespace === namespace);
  }

  byIndex(key: string): T[] {
    const keys = this.index.get(key);
    if (keys === undefined) return [];
    return (typeof keys === "string" ? [keys] : [...keys]).flatMap((k) => {
      const o = this.store.get(k);
      return o ? [o] : [];
    });
  }

  /**
   * Puts an object the caller just wrote or read (the apiserver's answer) into the cache, unless the cache already
   * holds that version or a newer one: the next reconcile then sees its own write even before the watch delivers it.
   * Answers the object the cache holds under its key now, decoded.
   */
  upsert(written: KubeObject): T {
    const current = this.store.get(this.keyOf(written));
    if (current && (sameVersion(written, current) || isOlder(written, current))) return current;
    const object = this.transformed(written);
    const key = this.keyOf(object);
    this.put(key, object);
    this.emit(current ? "update" : "add", object, current);
    return object;
  }

  private keyOf(object: KubeObject): string {
    const key = objectKey(object);
    return this.opts.keys ? this.opts.keys(key) : key;
  }

  private indexKeysOf(object: T): string[] {
    const keys = this.opts.indexKeys?.(object) ?? [];
    return this.opts.keys ? keys.map(this.opts.keys) : keys;
  }

  private transformed(object: KubeObject): T {
    return this.opts.transform ? this.opts.transform(object) : (object as T);
  }

  private put(key: string, object: T): void {
    const previous = this.store.get(key);
    if (previous) this.unindex(key, previous);
    this.store.set(key, object);
    for (const k of this.indexKeysOf(object)) {
      const keys = this.index.get(k);
      if (keys === undefined || keys === key) this.index.set(k, key);
      else if (typeof keys === "string") this.index.set(k, new Set([keys, key]));
      else keys.add(key);
    }
  }

  private remove(key: string): T | undefined {
    const previous = this.store.get(key);
    if (!previous) return undefined;
    this.unindex(key, previous);
    this.store.delete(key);
    return previous;
  }

  private unindex(key: string, object: T): void {
    for (const k of this.opts.indexKeys?.(object) ?? []) {
      const keys = this.index.get(k);
      if (keys === key) {
        this.index.delete(k);
      } else if (typeof keys === "object") {
        keys.delete(key);
        if (keys.size === 1) this.index.set(k, keys.values().next().value!);
      }
    }
  }

  private emit(event: InformerEvent, object: T, previous?: T): void {
    for (const h of this.handlers) {
      try {
        h(event, object, previous);
      } catch (err) {
        this.opts.log.error({ err, path: this.opts.path }, "Informer handler failed");
      }
    }
  }

  private async run(): Promise<void> {
    const backoff = this.opts.backoff ?? { initialMs: 500, maxMs: 30_000 };
    let delay = 0;
    while (!this.stopped) {
      try {
        if (!this.resourceVersion) await this.relist();
        const progressed = await this.watchOnce();
        if (progressed) delay = 0;
      } catch (err) {
        if (this.stopped) break;
        if (isGone(err)) {
          this.opts.log.info({ path: this.opts.path }, "Watch expired (410 Gone); relisting");
          this.resourceVersion = "";
          continue;
        }
        delay = delay === 0 ? backoff.initialMs : Math.min(delay * 2, backoff.maxMs);
        const jittered = Math.round(delay * (0.8 + Math.random() * 0.4));
        this.opts.log.warn(
          { err: String(err), path: this.opts.path, retryInMs: jittered },
          "Watch failed; reconnecting",
        );
        await this.sleep(jittered);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async relist(): Promise<void> {
    const seen = new Map<string, T>();
    let continueToken: string | undefined;
    let resourceVersion: string;
    do {
      const page = await this.opts.client.list<KubeObject>(this.opts.path, {
        labelSelector: this.opts.labelSelector,
        fieldSelector: this.opts.fieldSelector,
        limit: String(this.opts.pageSize ?? 500),
        continue: continueToken,
      });
      for (const item of page.items) {
        // The version the cache holds already is not decoded again.
        const key = this.keyOf(item);
        const held = this.store.get(key);
        seen.set(key, held && sameVersion(item, held) ? held : this.transformed(item));
      }
      continueToken = page.metadata.continue || undefined;
      resourceVersion = page.metadata.resourceVersion ?? "";
    } while (continueToken);
    this.relists++;
    this.lastActivity = Date.now();
    for (const [key, previous] of [...this.store]) {
      if (!seen.has(key)) {
        this.remove(key);
        this.emit("delete", previous);
      }
    }
    for (const [key, object] of seen) {
      const previous = this.store.get(key);
      if (previous?.metadata?.resourceVersion === object.metadata?.resourceVersion) continue;
      this.put(key, object);
      this.emit(previous ? "update" : "add", object, previous);
    }
    this.resourceVersion = resourceVersion;
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  /** One watch request; true when it delivered at least one event. */
  private async watchOnce(): Promise<boolean> {
    const timeoutSeconds = this.opts.watchTimeoutSeconds ?? 300;
    const stallMs = this.opts.stallTimeoutMs ?? (timeoutSeconds + 30) * 1000;
    const abort = new AbortController();
    this.abort = abort;
    let events = 0;
    let stalled = false;
    let watchdog: NodeJS.Timeout | undefined;
    const feed = () => {
      this.lastActivity = Date.now();
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        stalled = true;
        abort.abort();
      }, stallMs);
    };
    feed();
    let gone = false;
    try {
      await this.opts.client.watch<KubeObject>(
        this.opts.path,
        {
          resourceVersion: this.resourceVersion,
          labelSelector: this.opts.labelSelector,
          fieldSelector: this.opts.fieldSelector,
          allowWatchBookmarks: "true",
          timeoutSeconds: String(timeoutSeconds),
        },
        (event: WatchEvent<KubeObject>) => {
          feed();
          events++;
          if (this.apply(event)) return undefined;
          gone = true;
          return "stop";
        },
        abort.signal,
      );
    } finally {
      clearTimeout(watchdog);
      this.abort = undefined;
    }
    if (stalled) {
      this.stalls++;
      this.opts.log.warn({ path: this.opts.path, stallMs }, "Watch stalled; restarting it");
    }
    if (gone) {
      this.opts.log.info({ path: this.opts.path }, "Watch expired (410 Gone); relisting");
      this.resourceVersion = "";
    }
    return events > 0;
  }

  /**
   * Applies one watch event to the cache; false when the watch must end and the cache be relisted. An object is
   * decoded only when the cache does not hold its version yet: a write the cache took from the apiserver's answer
   * (upsert) comes back by the watch as the version already held, and changes nothing.
   */
  private apply(event: WatchEvent<KubeObject>): boolean {
    const raw = event.object;
    if (event.type === "ERROR") {
      const status = raw as unknown as { code?: number; message?: string };
      if (status.code !== 410) this.opts.log.warn({ path: this.opts.path, status }, "Watch error event");
      return false;
    }
    const rv = raw.metadata?.resourceVersion;
    if (event.type === "BOOKMARK") {
      if (rv) this.resourceVersion = rv;
      return true;
    }
    const key = this.keyOf(raw);
    const previous = this.store.get(key);
    if (event.type === "DELETED") {
      this.remove(key);
      this.emit("delete", previous && sameVersion(raw, previous) ? previous : this.transformed(raw), previous);
    } else if (!previous || !(sameVersion(raw, previous) || isOlder(raw, previous))) {
      const object = this.transformed(raw);
      this.put(key, object);
      this.emit(previous ? "update" : "add", object, previous);
    }
    if (rv) this.resourceVersion = rv;
    return true;
  }
}
