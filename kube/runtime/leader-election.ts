import type { Logger } from "pino";
import { isNotFound, type KubeClient } from "./client.ts";
import { LEASES, resourcePath } from "./resources.ts";
import { acquireOrRenew, LeaseObserver, release, type Lease } from "./lease.ts";

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection: the holder renews the lease every
 * retry period; another candidate takes it over only after it saw the same record unchanged for a whole lease
 * duration (measured on its own clock, so clocks need not agree). Writes use the lease's resourceVersion, so two
 * candidates can never both win. A leader that cannot renew within the renew deadline stops leading; on shutdown it
 * releases the lease so a successor starts at once.
 */

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

export class LeaderElector {
  private readonly o: LeaderElectorOptions;
  private readonly observer = new LeaseObserver();
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
    let lease: Lease | undefined;
    try {
      lease = await this.o.client.get<Lease>(this.path);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (lease) {
      this.observer.observe(lease);
      if (this.observer.heldByOther(lease, this.o.identity, this.o.leaseDurationSeconds)) return false;
    }
    const updated = await acquireOrRenew(this.o, lease, this.now());
    if (updated) this.observer.observe(updated);
    return updated !== undefined;
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
      if (!(await release(this.o.client, lease, this.o.identity, this.now()))) return;
      this.o.log.info({ identity: this.o.identity }, "Released the lease");
    } catch (err) {
      this.o.log.warn({ err: String(err) }, "Cannot release the lease");
    }
  }
}
