import type { IntegrationsStore } from "./store.ts";

interface Held {
  value: string;
  /** Milliseconds since the epoch; Infinity for a value that does not expire. */
  expiresAt: number;
}

/** Expired values are dropped when read, and all of them at most this often when something is written. */
const SWEEP_EVERY_MS = 60_000;

/**
 * The store of the embedded default (`kubecrew dev` without KUBECREW_REDIS_URL): the same keys and values RedisStore keeps, in
 * this process's memory, so connection records carry their tokens sealed exactly as in Redis. Everything is gone when
 * the process ends. Same behaviour as RedisStore (one contract suite runs against both).
 */
export class MemoryStore implements IntegrationsStore {
  readonly kind = "memory";
  private readonly values = new Map<string, Held>();
  private readonly indexes = new Map<string, Map<string, string>>();
  private readonly now: () => number;
  private lastSweep: number;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
    this.lastSweep = this.now();
  }

  /** Every key with what is held under it, as text: for tests that look for secrets in what the store keeps. */
  snapshot(): Record<string, string> {
    this.sweep();
    const shown: Record<string, string> = {};
    for (const [key, held] of this.values) shown[key] = held.value;
    for (const [key, fields] of this.indexes) shown[key] = JSON.stringify(Object.fromEntries(fields));
    return shown;
  }

  async get(key: string) {
    return this.read(key);
  }

  async getMany(keys: string[]) {
    return keys.map((key) => this.read(key));
  }

  async take(key: string) {
    const value = this.read(key);
    this.values.delete(key);
    return value;
  }

  async putFor(key: string, value: string, ttlMs: number) {
    this.write(key, value, this.now() + ttlMs);
  }

  async putUntil(key: string, value: string, atMs: number) {
    // Redis drops a key set to expire in the past at once.
    if (atMs <= this.now()) this.values.delete(key);
    else this.write(key, value, atMs);
  }

  async replace(key: string, value: string) {
    if (this.read(key) === undefined) return false;
    this.write(key, value, Infinity);
    return true;
  }

  async exists(key: string) {
    return this.read(key) !== undefined;
  }

  async indexGet(key: string, field: string) {
    return this.indexes.get(key)?.get(field);
  }

  async indexAll(key: string) {
    return Object.fromEntries(this.indexes.get(key) ?? []);
  }

  async putIndexed(record: { key: string; value: string }, index: { key: string; field: string; value: string }) {
    this.write(record.key, record.value, Infinity);
    let fields = this.indexes.get(index.key);
    if (!fields) this.indexes.set(index.key, (fields = new Map()));
    fields.set(index.field, index.value);
  }

  async deleteIndexed(recordKey: string, index: { key: string; field: string }) {
    this.values.delete(recordKey);
    const fields = this.indexes.get(index.key);
    fields?.delete(index.field);
    if (fields?.size === 0) this.indexes.delete(index.key);
  }

  async tryLock(key: string, holder: string, ttlMs: number) {
    if (this.read(key) !== undefined) return false;
    this.write(key, holder, this.now() + ttlMs);
    return true;
  }

  async unlock(key: string, holder: string) {
    if (this.read(key) === holder) this.values.delete(key);
  }

  async reachable() {
    return true;
  }

  private read(key: string): string | undefined {
    const held = this.values.get(key);
    if (!held) return undefined;
    if (held.expiresAt <= this.now()) {
      this.values.delete(key);
      return undefined;
    }
    return held.value;
  }

  private write(key: string, value: string, expiresAt: number): void {
    this.values.set(key, { value, expiresAt });
    if (this.now() - this.lastSweep >= SWEEP_EVERY_MS) this.sweep();
  }

  private sweep(): void {
    const now = this.now();
    this.lastSweep = now;
    for (const [key, held] of this.values) if (held.expiresAt <= now) this.values.delete(key);
  }
}
