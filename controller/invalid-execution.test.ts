import { describe, expect, it } from "vitest";
import pino from "pino";
import type { KubeObject } from "../kube/runtime/client.ts";
import * as r from "../kube/resources.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { createCaches } from "./caches.ts";
import { ExecutionReconciler } from "./execution-reconciler.ts";
import { StartLimit } from "./start-limit.ts";

/**
 * An execution whose spec breaks the schema (the CRD's validation let it through) is decoded once by the cache, kept
 * with what is wrong, and failed once by its reconciler: Failed, the problems as its error, Succeeded False
 * (InvalidSpec) and one Warning Event — then nothing more, however often it is reconciled. (Before, each reconcile
 * parsed it again, logged a warning and left it Pending for ever.)
 */
const NS = "team-a";
const ID = "6a1e2f1c-0f3a-4c55-9f0e-4c7d2a6b9e11";
const KEY = `${NS}/${ID}`;
const executionPath = r.resourcePath(r.CREW_EXECUTIONS, NS, ID);

function world() {
  const kube = new RecordingKube();
  const log = pino({ level: "silent" });
  const caches = createCaches({ client: kube, log, namespace: NS, watchTimeoutSeconds: 60 });
  const events: string[] = [];
  const startLimit = new StartLimit({ max: 1, wake: () => undefined });
  const reconciler = new ExecutionReconciler({
    client: kube,
    caches,
    jobSettings: { defaultImage: "kubecrew:test", defaultServiceAccount: "runner", runnerCommand: ["kubecrew"] },
    finishedTtlSeconds: 60,
    now: () => new Date("2026-03-01T10:00:05.000Z"),
    log,
    startLimit,
    events: { record: (target, type, reason, message) => events.push(`${target.name} ${type} ${reason}: ${message}`) },
    webhooks: { enqueue: () => true },
  });
  return { kube, caches, events, reconciler };
}

const invalid = (status?: unknown): KubeObject => ({
  apiVersion: r.CREW_EXECUTIONS.apiVersion,
  kind: r.CREW_EXECUTIONS.kind,
  metadata: { name: ID, namespace: NS, uid: "exec-uid", generation: 1 },
  // No crew named: the schema needs crewRef.name.
  spec: { crewRef: {}, inputs: {}, webhooks: { crew: "http://hooks.test/crew" } },
  ...(status ? { status } : {}),
});

describe("an execution whose spec does not decode", () => {
  it("fails once with what is wrong: Failed, Succeeded False (InvalidSpec), one Warning Event, no Job", async () => {
    const { kube, caches, events, reconciler } = world();
    caches.executions.upsert(kube.seed(r.resourcePath(r.CREW_EXECUTIONS, NS), invalid()));
    expect(await reconciler.reconcile(KEY)).toEqual({ phase: "Failed" });

    expect(kube.log).toEqual([`patch ${executionPath}/status`]);
    const status = kube.stored(executionPath)!.status as {
      phase: string;
      error: string;
      conditions: { type: string; status: string; reason: string; message: string }[];
    };
    expect(status.phase).toBe("Failed");
    expect(status.error).toMatch(/^The CrewExecution is invalid: spec\.crewRef\.name: /);
    expect(status.conditions).toEqual([
      expect.objectContaining({ type: "Succeeded", status: "False", reason: "InvalidSpec", message: status.error }),
    ]);
    expect(events).toEqual([`${ID} Warning InvalidSpec: ${status.error}`]);

    // Reconciled again, and by a controller that restarted (its cache holds the Failed status): nothing more.
    await reconciler.reconcile(KEY);
    const restarted = world();
    restarted.caches.executions.upsert(kube.stored(executionPath)!);
    await restarted.reconciler.reconcile(KEY);
    expect(kube.log).toHaveLength(1);
    expect(events).toHaveLength(1);
    expect(restarted.events).toEqual([]);
  });

  it("keeps the time it started when it had one", async () => {
    const { kube, caches, reconciler } = world();
    const started = { phase: "Running", startTime: "2026-03-01T10:00:00.000Z" };
    caches.executions.upsert(kube.seed(r.resourcePath(r.CREW_EXECUTIONS, NS), invalid(started)));
    await reconciler.reconcile(KEY);
    expect(kube.stored(executionPath)!.status).toMatchObject({
      phase: "Failed",
      startTime: "2026-03-01T10:00:00.000Z",
      completionTime: "2026-03-01T10:00:05.000Z",
      executionTime: 5,
    });
  });
});
