import { isAlreadyExists, isConflict, type KubeClient } from "./client.ts";
import { LEASES, resourcePath } from "./resources.ts";

/**
 * A coordination.k8s.io/v1 Lease as client-go's leaderelection uses it, shared by the leader elector and the shard
 * elector: who holds it is decided by resourceVersion-guarded writes (two candidates can never both win), and a
 * record counts as expired only once a candidate saw it unchanged for a whole lease duration on its own clock (so
 * clocks need not agree).
 */
export interface Lease {
  apiVersion: "coordination.k8s.io/v1";
  kind: "Lease";
  metadata: { name: string; namespace: string; resourceVersion?: string; uid?: string };
  spec: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number;
  };
}

/** MicroTime, as the apiserver wants it in a Lease. */
export const micro = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

export const holderOf = (lease: Lease | undefined): string => lease?.spec.holderIdentity ?? "";

/** When this process first saw each lease record (holder, renew time, resourceVersion), on its own clock. */
export class LeaseObserver {
  private readonly seen = new Map<string, { key: string; at: number }>();
  private readonly clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.clock = clock;
  }

  /** Notes the record (a new record starts its own clock); call for every lease read or written. */
  observe(lease: Lease): void {
    const key = `${holderOf(lease)}|${lease.spec.renewTime ?? ""}|${lease.metadata.resourceVersion}`;
    if (this.seen.get(lease.metadata.name)?.key !== key) this.seen.set(lease.metadata.name, { key, at: this.clock() });
  }

  /** How long the record has been seen unchanged, in ms (0 for one never observed). */
  unchangedForMs(lease: Lease): number {
    const seen = this.seen.get(lease.metadata.name);
    return seen ? this.clock() - seen.at : 0;
  }

  /** The record has not changed for its lease duration (`fallbackSeconds` when it names none). */
  expired(lease: Lease, fallbackSeconds: number): boolean {
    return this.unchangedForMs(lease) > (lease.spec.leaseDurationSeconds ?? fallbackSeconds) * 1000;
  }

  /** Someone else holds it and has renewed it within its duration. */
  heldByOther(lease: Lease, identity: string, fallbackSeconds: number): boolean {
    const holder = holderOf(lease);
    return holder !== "" && holder !== identity && !this.expired(lease, fallbackSeconds);
  }

  forget(name: string): void {
    this.seen.delete(name);
  }
}

export interface LeaseTarget {
  client: Pick<KubeClient, "create" | "replace">;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  /** Extra labels of a lease created here. */
  labels?: Record<string, string>;
}

/**
 * Takes or renews the lease for `identity`, given the record just read (`current`; undefined: there is none): creates
 * it, or replaces it guarded by its resourceVersion. Answers the written lease, or undefined when another candidate
 * wrote first (a conflict, or it was created meanwhile). The caller decides beforehand whether it may take it.
 */
export async function acquireOrRenew(
  t: LeaseTarget,
  current: Lease | undefined,
  now: Date,
): Promise<Lease | undefined> {
  const mine = { holderIdentity: t.identity, leaseDurationSeconds: t.leaseDurationSeconds, renewTime: micro(now) };
  if (!current) {
    try {
      return await t.client.create<Lease>(resourcePath(LEASES, t.namespace), {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: {
          name: t.name,
          namespace: t.namespace,
          ...(t.labels ? { labels: t.labels } : {}),
        } as Lease["metadata"],
        spec: { ...mine, acquireTime: micro(now), leaseTransitions: 0 },
      });
    } catch (err) {
      if (isAlreadyExists(err)) return undefined;
      throw err;
    }
  }
  const holder = holderOf(current);
  const takingOver = holder !== t.identity;
  const next: Lease = {
    ...current,
    spec: {
      ...current.spec,
      ...mine,
      ...(takingOver
        ? { acquireTime: micro(now), leaseTransitions: (current.spec.leaseTransitions ?? 0) + (holder ? 1 : 0) }
        : {}),
    },
  };
  try {
    return await t.client.replace<Lease>(resourcePath(LEASES, t.namespace, t.name), next);
  } catch (err) {
    if (isConflict(err)) return undefined;
    throw err;
  }
}

/**
 * Gives the lease up (no holder, a 1 s duration) so the next candidate need not wait for it to expire; only if
 * `identity` still holds `current`. Guarded by its resourceVersion like every write.
 */
export async function release(
  client: Pick<KubeClient, "replace">,
  current: Lease,
  identity: string,
  now: Date,
): Promise<boolean> {
  if (holderOf(current) !== identity) return false;
  await client.replace<Lease>(resourcePath(LEASES, current.metadata.namespace, current.metadata.name), {
    ...current,
    spec: { ...current.spec, holderIdentity: null, leaseDurationSeconds: 1, renewTime: micro(now) },
  });
  return true;
}
