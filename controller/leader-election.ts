import type { Logger } from "../core/logger.ts";
import { isConflict, isNotFound, isAlreadyExists, type KubeClient } from "../kube/client.ts";
import { LEASES, resourcePath } from "../kube/resources.ts";

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection: the holder renews the lease every
 * retry period; another candidate takes it over only after it saw the same record unchanged for a whole lease
 * duration (measured on its own clock, so clocks need not agree). Writes use the lease's resourceVersion, so two
 * candidates can never both win. A leader that cannot renew within the renew deadline stops leading; on shutdown it
 * releases the lease so a successor starts at once.
 */

interface Lease {
  apiVersion: "coordination.k8s.io/v1";
  kind: "Lease";
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number;
  };
}

export interface LeaderElectorOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  log: Logger;
  now?: () => Date;
  onStartedLeading: () => void | Promise<void>;
  onStoppedLeading: () => void;
}

const micro = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

export class LeaderElector {
  private readonly o: LeaderElectorOptions;
  private observed: { key: string; at: number } | undefined;
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private lastRenew = 0;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(options: LeaderElectorOptions) {
    this.o = options;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.loop ??= this.run();
  }

  private now(): Date {
    return this.o.now?.() ?? new Date();
  }

  private get path(): string {
    return resourcePath(LEASES, this.o.namespace, this.o.name);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let ok = false;
      try {
        ok = await this.tryAcquireOrRenew();
      } catch (err) {
        this.o.log.warn({ err: String(err), lease: this.o.name }, "Lease update failed");
      }
      if (this.stopped) break;
      const nowMs = Date.now();
      if (ok) {
        this.lastRenew = nowMs;
        if (!this.leading) {
          this.leading = true;
          this.o.log.info(
            { identity: this.o.identity, lease: `${this.o.namespace}/${this.o.name}` },
            "Became the leader",
          );
          await this.o.onStartedLeading();
        }
      } else if (this.leading && nowMs - this.lastRenew > this.o.renewDeadlineSeconds * 1000) {
        this.leading = false;
        this.o.log.error({ identity: this.o.identity }, "Lost the lease; stopping leading");
        this.o.onStoppedLeading();
      }
      await new Promise<void>((resolve) => {
        this.timer = setTimeout(
          resolve,
          this.o.retryPeriodSeconds * 1000 * (this.leading ? 1 : 0.8 + Math.random() * 0.4),
        );
        this.wake = resolve;
      });
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.now();
    let lease: Lease | undefined;
    try {
      lease = await this.o.client.get<Lease>(this.path);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const mine = {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: this.o.leaseDurationSeconds,
      renewTime: micro(now),
    };
    if (!lease) {
      try {
        await this.o.client.create(resourcePath(LEASES, this.o.namespace), {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: this.o.name, namespace: this.o.namespace },
          spec: { ...mine, acquireTime: micro(now), leaseTransitions: 0 },
        } satisfies Lease);
        return true;
      } catch (err) {
        if (isAlreadyExists(err)) return false;
        throw err;
      }
    }
    const spec = lease.spec;
    const holder = spec.holderIdentity ?? "";
    const key = `${holder}|${spec.renewTime ?? ""}|${lease.metadata.resourceVersion}`;
    if (this.observed?.key !== key) this.observed = { key, at: Date.now() };
    const expired = Date.now() - this.observed.at > (spec.leaseDurationSeconds ?? this.o.leaseDurationSeconds) * 1000;
    if (holder && holder !== this.o.identity && !expired) return false;
    const takingOver = holder !== this.o.identity;
    const next: Lease = {
      ...lease,
      spec: {
        ...spec,
        ...mine,
        ...(takingOver
          ? { acquireTime: micro(now), leaseTransitions: (spec.leaseTransitions ?? 0) + (holder ? 1 : 0) }
          : {}),
      },
    };
    try {
      const updated = await this.o.client.replace<Lease>(this.path, next);
      this.observed = {
        key: `${this.o.identity}|${updated.spec.renewTime ?? ""}|${updated.metadata.resourceVersion}`,
        at: Date.now(),
      };
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  /** Stops campaigning; a leader gives the lease up so the next candidate need not wait for it to expire. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.wake?.();
    await this.loop;
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.o.client.get<Lease>(this.path);
      if (lease.spec.holderIdentity !== this.o.identity) return;
      await this.o.client.replace<Lease>(this.path, {
        ...lease,
        spec: { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1, renewTime: micro(this.now()) },
      });
      this.o.log.info({ identity: this.o.identity }, "Released the lease");
    } catch (err) {
      this.o.log.warn({ err: String(err) }, "Cannot release the lease");
    }
  }
}
