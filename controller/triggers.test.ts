import pino from "pino";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../kube/runtime/client.ts";
import { LABEL_EXECUTION, LABEL_TASK } from "../kube/resources.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { createCaches } from "./caches.ts";
import type { JobObject } from "./observe.ts";
import { queueOnChange } from "./triggers.ts";
import { WorkQueue } from "../kube/runtime/work-queue.ts";

const NS = "team-a";
const log = pino({ level: "silent" });

/** The caches wired to work queues; `queued()` drains the execution queue and answers what was in it. */
function wired() {
  const caches = createCaches({ client: new RecordingKube(), log, namespace: NS, watchTimeoutSeconds: 60 });
  const queues = { executions: new WorkQueue(), crews: new WorkQueue() };
  queueOnChange(caches, queues);
  const queued = async () => {
    const keys: string[] = [];
    while (queues.executions.depth > 0) {
      const key = (await queues.executions.get())!;
      queues.executions.done(key);
      keys.push(key);
    }
    return keys;
  };
  return { caches, queued };
}

const job = (rv: string, status: JobObject["status"], deleting = false): JobObject => ({
  metadata: {
    name: "e1-0",
    namespace: NS,
    resourceVersion: rv,
    labels: { [LABEL_EXECUTION]: "e1", [LABEL_TASK]: "draft" },
    ...(deleting ? { deletionTimestamp: "2026-03-01T10:00:00Z" } : {}),
  },
  status,
});

const execution = (rv: string, phase?: string): KubeObject => ({
  metadata: { name: "e1", namespace: NS, resourceVersion: rv },
  spec: { crewRef: { name: "research" } },
  ...(phase ? { status: { phase } } : {}),
});

describe("queueOnChange", () => {
  it("queues an execution for its Job's appearance, end and deletion, not for status changes that leave the run as it was", async () => {
    const { caches, queued } = wired();
    caches.jobs.upsert(job("10", {}));
    expect(await queued()).toEqual([`${NS}/e1`]);
    // The Job controller's bookkeeping while the pod runs: active, ready, uncounted pods.
    caches.jobs.upsert(job("11", { active: 1, startTime: "2026-03-01T10:00:01Z" }));
    caches.jobs.upsert(job("12", { active: 1, startTime: "2026-03-01T10:00:01Z", ready: 1 } as JobObject["status"]));
    expect(await queued()).toEqual([]);
    caches.jobs.upsert(job("13", { succeeded: 1, conditions: [{ type: "Complete", status: "True" }] }));
    expect(await queued()).toEqual([`${NS}/e1`]);
    caches.jobs.upsert(job("14", { succeeded: 1, conditions: [{ type: "Complete", status: "True" }] }, true));
    expect(await queued()).toEqual([`${NS}/e1`]);
  });

  it("queues a Job that failed, with its reason", async () => {
    const { caches, queued } = wired();
    caches.jobs.upsert(job("10", { active: 1 }));
    await queued();
    caches.jobs.upsert(
      job("11", { failed: 1, conditions: [{ type: "Failed", status: "True", reason: "BackoffLimitExceeded" }] }),
    );
    expect(await queued()).toEqual([`${NS}/e1`]);
  });

  it("does not queue a watch event that brings back the version the cache holds (the controller's own write)", async () => {
    const { caches, queued } = wired();
    caches.executions.upsert(execution("20"));
    expect(await queued()).toEqual([`${NS}/e1`]);
    // The status write's answer is put in the cache (a change: queued); its watch event later brings the same version.
    caches.executions.upsert(execution("21", "Running"));
    expect(await queued()).toEqual([`${NS}/e1`]);
    caches.executions.upsert(execution("21", "Running"));
    expect(await queued()).toEqual([]);
    caches.executions.upsert(execution("22", "Succeeded"));
    expect(await queued()).toEqual([`${NS}/e1`]);
  });

  it("queues an execution urgently for each new result, once per version", async () => {
    const { caches, queued } = wired();
    caches.executions.upsert(execution("20"));
    await queued();
    const result = {
      metadata: { name: "e1-0", namespace: NS, resourceVersion: "30", labels: { [LABEL_EXECUTION]: "e1" } },
      spec: {},
    };
    caches.results.upsert(result);
    expect(await queued()).toEqual([`${NS}/e1`]);
    caches.results.upsert(result);
    expect(await queued()).toEqual([]);
  });
});
