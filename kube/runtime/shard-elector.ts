import type { Logger } from "pino";
import { fnv1a32 } from "./shard.ts";
import type { KubeClient } from "./client.ts";
import { LEASES, resourcePath } from "./resources.ts";
import { acquireOrRenew, holderOf, LeaseObserver, release, type Lease, type LeaseTarget } from "./lease.ts";
import { planShards } from "./shard-plan.ts";

/**
 * Shards of a controller's work held on Leases, one per shard (`<id>-shard-<i>`), with the semantics of the leader elector
 * (lease.ts: resourceVersion-guarded writes, expiry judged on this replica's own clock, release on shutdown). Each
 * replica also keeps a member Lease (`<id>-member-<identity>`) so the others can count the live replicas; every
 * retry period it lists the group's Leases once, renews its member Lease and the shards it keeps, and takes or gives
 * up shards as planShards() says (at most its fair share, ceil(shards / live replicas)). A shard it cannot renew
 * within the renew deadline, or that another replica took, is lost: onLost() stops new work for it.
 */

export interface ShardElectorOptions {
  client: Pick<KubeClient, "list" | "get" | "create" | "replace" | "delete">;
  namespace: string;
  /** The election id: the Leases are `<name>-shard-<i>` and `<name>-member-<identity>`. */
  name: string;
  /** The label that groups the Leases of one installation (its value is the election id), to list them at once. */
  groupLabel: string;
  identity: string;
  shards: number;
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  log: Logger;
  now?: () => Date;
  /** The clock leases' expiry is judged by (ms). */
  clock?: () => number;
  onGained: (shard: number) => void;
  onLost: (shard: number) => void;
}

export const shardLeaseName = (name: string, shard: number) => `${name}-shard-${shard}`;

/** The member Lease's name: the identity as is when it is a valid name part, else a cleaned form and its hash. */
export function memberLeaseName(name: string, identity: string): string {
  if (/^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/.test(identity)) return `${name}-member-${identity}`;
  const clean = identity
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "")
    .slice(0, 50);
  return `${name}-member-${clean ? clean + "-" : ""}${fnv1a32(identity).toString(36)}`;
}

export class ShardElector {
  private readonly o: ShardElectorOptions;
  private readonly observer: LeaseObserver;
  private readonly renewedAt = new Map<number, number>();
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(options: ShardElectorOptions) {
    this.o = options;
    this.observer = new LeaseObserver(options.clock);
  }

  /** The shards this replica holds now, ascending. */
  get held(): number[] {
    return [...this.renewedAt.keys()].sort((a, b) => a - b);
  }

  holds(shard: number): boolean {
    return this.renewedAt.has(shard);
  }

  start(): void {
    this.loop ??= this.run();
  }

  private clock(): number {
    return this.o.clock?.() ?? Date.now();
  }

  private now(): Date {
    return this.o.now?.() ?? new Date();
  }

  private target(name: string): LeaseTarget {
    const { client, namespace, identity, leaseDurationSeconds } = this.o;
    return { client, namespace, identity, leaseDurationSeconds, name, labels: { [this.o.groupLabel]: this.o.name } };
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.tick();
      } catch (err) {
        this.o.log.warn({ err: String(err) }, "Shard leases: cannot list or update");
      }
      if (this.stopped) break;
      for (const [shard, at] of this.renewedAt) {
        if (this.clock() - at > this.o.renewDeadlineSeconds * 1000) this.lose(shard, "not renewed within the deadline");
      }
      await new Promise<void>((resolve) => {
        this.timer = setTimeout(resolve, this.o.retryPeriodSeconds * 1000);
        this.wake = resolve;
      });
    }
  }

  private lose(shard: number, why: string): void {
    if (!this.renewedAt.delete(shard)) return;
    this.o.log.warn({ shard, why, identity: this.o.identity }, "Lost a shard");
    this.o.onLost(shard);
  }

  /** One round: list the group's Leases, renew the member Lease, keep, take and give up shards. */
  async tick(): Promise<void> {
    const { client, namespace, name, identity, shards, leaseDurationSeconds: duration } = this.o;
    const listed = await client.list<Lease>(resourcePath(LEASES, namespace), {
      labelSelector: `${this.o.groupLabel}=${name}`,
    });
    const byName = new Map(listed.items.map((l) => [l.metadata.name, l]));
    for (const lease of listed.items) this.observer.observe(lease);
    const expired = (l: Lease) => this.observer.expired(l, duration);
    const shardLeases = Array.from({ length: shards }, (_, i) => byName.get(shardLeaseName(name, i)));
    // A replica that let a shard expire is gone, whatever its member Lease says (they are renewed a moment apart).
    const dead = new Set(shardLeases.filter((l) => l && holderOf(l) && expired(l)).map((l) => holderOf(l)));
    const memberPrefix = `${name}-member-`;
    const memberLeases = listed.items.filter((l) => l.metadata.name.startsWith(memberPrefix));
    const members = memberLeases
      .filter((l) => holderOf(l) && !expired(l) && !dead.has(holderOf(l)))
      .map((l) => holderOf(l));
    const holders = shardLeases.map((l) => {
      const holder = holderOf(l);
      return holder === identity || (holder && !expired(l!)) ? holder : "";
    });
    for (const shard of this.held) if (holders[shard] !== identity) this.lose(shard, `taken by ${holders[shard]}`);

    const plan = planShards({ shards, me: identity, members, holders });
    const now = this.now();
    const member = memberLeaseName(name, identity);
    const writes: Promise<unknown>[] = [this.write(member, byName.get(member), now)];
    for (const shard of [...plan.keep, ...plan.acquire]) {
      writes.push(
        this.write(shardLeaseName(name, shard), shardLeases[shard], now).then((ok) => {
          if (!ok) return;
          const gained = !this.renewedAt.has(shard);
          this.renewedAt.set(shard, this.clock());
          if (gained) {
            this.o.log.info({ shard, identity, shards }, "Holding a shard");
            this.o.onGained(shard);
          }
        }),
      );
    }
    for (const shard of plan.release) {
      this.lose(shard, "beyond the fair share; released for another replica");
      writes.push(this.give(shardLeases[shard]!, now));
    }
    // Member Leases of replicas gone for three lease durations are removed (a rollout leaves one per old pod).
    for (const l of memberLeases) {
      if (holderOf(l) !== identity && this.observer.unchangedForMs(l) > 3 * duration * 1000) {
        writes.push(this.remove(l));
      }
    }
    await Promise.all(writes);
  }

  /** Takes or renews one Lease; false when another replica wrote first or the write failed. */
  private async write(leaseName: string, current: Lease | undefined, now: Date): Promise<boolean> {
    try {
      const written = await acquireOrRenew(this.target(leaseName), current, now);
      if (written) this.observer.observe(written);
      return written !== undefined;
    } catch (err) {
      this.o.log.warn({ err: String(err), lease: leaseName }, "Lease update failed");
      return false;
    }
  }

  private async give(lease: Lease, now: Date): Promise<void> {
    try {
      await release(this.o.client, lease, this.o.identity, now);
    } catch (err) {
      this.o.log.warn({ err: String(err), lease: lease.metadata.name }, "Cannot release the lease");
    }
  }

  private async remove(lease: Lease): Promise<void> {
    try {
      await this.o.client.delete(resourcePath(LEASES, lease.metadata.namespace, lease.metadata.name), {
        ...(lease.metadata.uid ? { uid: lease.metadata.uid } : {}),
      });
      this.observer.forget(lease.metadata.name);
    } catch (err) {
      this.o.log.debug({ err: String(err), lease: lease.metadata.name }, "Cannot remove a stale member lease");
    }
  }

  /** Stops campaigning, gives up every shard held (so others take them at once) and removes the member Lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.wake?.();
    await this.loop;
    const held = this.held;
    for (const shard of held) this.lose(shard, "shutting down");
    const now = this.now();
    const path = (n: string) => resourcePath(LEASES, this.o.namespace, n);
    await Promise.all(
      held.map(async (shard) => {
        try {
          const lease = await this.o.client.get<Lease>(path(shardLeaseName(this.o.name, shard)));
          if (await release(this.o.client, lease, this.o.identity, now)) {
            this.o.log.info({ shard, identity: this.o.identity }, "Released a shard");
          }
        } catch (err) {
          this.o.log.warn({ err: String(err), shard }, "Cannot release the shard");
        }
      }),
    );
    try {
      await this.o.client.delete(path(memberLeaseName(this.o.name, this.o.identity)));
    } catch (err) {
      this.o.log.debug({ err: String(err) }, "Cannot remove the member lease");
    }
  }
}
