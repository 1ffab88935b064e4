import { randomBytes } from "node:crypto";
import type { IntegrationsStore } from "./store.ts";

/** A lock in the store (in Redis, shared by every replica), freed only by its holder. */
export interface Lock {
  release(): Promise<void>;
}

export async function tryLock(store: IntegrationsStore, key: string, ttlMs: number): Promise<Lock | undefined> {
  const holder = randomBytes(16).toString("hex");
  if (!(await store.tryLock(key, holder, ttlMs))) return undefined;
  return {
    async release() {
      await store.unlock(key, holder);
    },
  };
}
