import { setTimeout as sleep } from "node:timers/promises";
import { PatchStrategy, setHeaderOptions, type CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import type { Logger } from "../../core/logger.ts";
import { isNotFound } from "./api-errors.ts";
import { podStatus, type PodRun } from "./pod-status.ts";

/**
 * Reports a pod's run as its status, as the kubelet does: a merge patch on the pod's status subresource, retried a few
 * times; a pod that is gone is not written.
 */
export class PodStatusWriter {
  private readonly core: CoreV1Api;
  private readonly log: Logger;
  /** The pod's latest state (the runtime's). */
  private readonly pod: () => V1Pod;
  private readonly run: PodRun;
  private queued = false;
  private chain: Promise<void> = Promise.resolve();

  constructor(o: { core: CoreV1Api; log: Logger; pod: () => V1Pod; run: PodRun }) {
    this.core = o.core;
    this.log = o.log;
    this.pod = o.pod;
    this.run = o.run;
  }

  /** Coalesces: at most one status write in flight and one queued, each sending the latest state. */
  write(): Promise<void> {
    if (this.queued) return this.chain;
    this.queued = true;
    this.chain = this.chain.then(async () => {
      this.queued = false;
      await this.patch();
    });
    return this.chain;
  }

  private async patch(): Promise<void> {
    const { name, namespace } = this.pod().metadata!;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const body = { status: podStatus(this.pod(), this.run, new Date()) };
        await this.core.patchNamespacedPodStatus(
          { name: name!, namespace: namespace!, body },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        );
        return;
      } catch (error) {
        if (isNotFound(error)) return;
        this.log.warn({ err: error, attempt }, "Writing pod status failed");
        await sleep(500 * (attempt + 1));
      }
    }
  }
}
