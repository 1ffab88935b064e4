import { describe, expect, it } from "vitest";
import pino from "pino";
import type { KubeObject } from "../kube/runtime/client.ts";
import { LABEL_EXECUTION, LABEL_TASK, LABEL_TASK_INDEX } from "../kube/resources.ts";
import { projectJobName, taskJobName } from "../kube/task-names.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { createCaches } from "./caches.ts";
import type { JobObject } from "./observe.ts";
import { StartLimit, type StartRequest } from "./start-limit.ts";

/**
 * The limit on tasks starting at once, fed by the controller's caches as the watches would fill them: who gets a
 * slot, who waits and in which order they are woken, and every way a start ends.
 */

const NS = "crews";
const log = pino({ level: "silent" });
let rv = 1;

function job(execution: string, index: number, status?: JobObject["status"], deleting = false): JobObject {
  return {
    metadata: {
      name: taskJobName(execution, index),
      namespace: NS,
      resourceVersion: String(rv++),
      labels: { [LABEL_EXECUTION]: execution, [LABEL_TASK]: `t${index}`, [LABEL_TASK_INDEX]: String(index) },
      ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:09Z" } : {}),
    },
    ...(status ? { status } : {}),
  };
}

function result(execution: string, index: number, name = taskJobName(execution, index)): KubeObject {
  return {
    metadata: {
      name,
      namespace: NS,
      resourceVersion: String(rv++),
      labels: { [LABEL_EXECUTION]: execution, [LABEL_TASK]: `t${index}`, [LABEL_TASK_INDEX]: String(index) },
    },
    spec: {
      executionRef: { name: execution },
      taskName: `t${index}`,
      taskIndex: index,
      agent: "Writer",
      executionTime: 1,
      output: "done",
    },
  };
}

const execution = (name: string): KubeObject => ({ metadata: { name, namespace: NS, resourceVersion: "1" } });

function world(max: number, owns?: (execution: string) => boolean) {
  const caches = createCaches({ client: new RecordingKube(), log, namespace: NS, watchTimeoutSeconds: 60 });
  const woken: string[] = [];
  const limit = new StartLimit({
    max,
    wake: (key, running) => woken.push(`${key.slice(NS.length + 1)}${running ? " (running)" : ""}`),
    ...(owns ? { owns } : {}),
  });
  limit.watch(caches);
  /** A reconcile of `name` that would start its task `index`; a slot given creates the Job, as the reconciler does. */
  const start = (name: string, o: { index?: number; running?: boolean; createdAt?: string } = {}) => {
    const index = o.index ?? 0;
    const request: StartRequest = {
      execution: `${NS}/${name}`,
      job: `${NS}/${taskJobName(name, index)}`,
      running: o.running ?? false,
      createdAt: o.createdAt ?? "2026-01-01T00:00:00Z",
    };
    const granted = limit.tryStart(request);
    if (granted) {
      caches.jobs.upsert(job(name, index));
      limit.settle(request.execution);
    }
    return granted;
  };
  return { caches, limit, woken, start };
}

describe("the limit on tasks starting at once", () => {
  it("gives a slot per task up to the limit; the next executions wait, and a pod running frees a slot for the oldest", () => {
    const { caches, limit, woken, start } = world(2);
    expect(start("a", { createdAt: "2026-01-01T00:00:01Z" })).toBe(true);
    expect(start("b", { createdAt: "2026-01-01T00:00:02Z" })).toBe(true);
    expect(start("d", { createdAt: "2026-01-01T00:00:04Z" })).toBe(false);
    expect(start("c", { createdAt: "2026-01-01T00:00:03Z" })).toBe(false);
    expect([limit.startingCount, limit.waitingCount]).toEqual([2, 2]);
    expect(woken).toEqual([]);

    // The Job controller counts a's pod active, then Ready: the task runs (an LLM for minutes) and counts no more.
    caches.jobs.upsert(job("a", 0, { active: 1, ready: 0 }));
    expect(woken).toEqual([]);
    caches.jobs.upsert(job("a", 0, { active: 1, ready: 1 }));
    expect(woken).toEqual(["c"]);
    expect(limit.startingCount).toBe(1);
    // d asking again before c came back gets nothing: the freed slot is c's.
    expect(start("d", { createdAt: "2026-01-01T00:00:04Z" })).toBe(false);
    expect(start("c", { createdAt: "2026-01-01T00:00:03Z" })).toBe(true);
    expect([limit.startingCount, limit.waitingCount]).toEqual([2, 1]);
    // a's pod restarting later (ready back to 0) does not take a slot again.
    caches.jobs.upsert(job("a", 0, { active: 1, ready: 0 }));
    expect(limit.startingCount).toBe(2);
  });

  it("serves executions already running (their next task) before new ones, and new ones oldest first", () => {
    const { caches, woken, start } = world(1);
    const at = (s: number) => `2026-01-01T00:00:0${s}Z`;
    const waiting: Record<string, { index?: number; running?: boolean; createdAt: string }> = {
      "new-late": { createdAt: at(9) },
      "new-early": { createdAt: at(5) },
      "old-run": { index: 1, running: true, createdAt: at(7) },
      "older-run": { index: 2, running: true, createdAt: at(1) },
    };
    expect(start("busy")).toBe(true);
    for (const [name, o] of Object.entries(waiting)) expect(start(name, o)).toBe(false);

    // Each time the task starting ends, the next in line is woken, takes the slot and starts its task.
    let done: [string, number] = ["busy", 0];
    for (let i = 0; i < 4; i++) {
      caches.results.upsert(result(...done));
      const next = woken.at(-1)!.replace(" (running)", "");
      expect(start(next, waiting[next])).toBe(true);
      done = [next, waiting[next]!.index ?? 0];
    }
    expect(woken).toEqual(["older-run (running)", "old-run (running)", "new-early", "new-late"]);
  });

  it("orders by age, not by arrival: a kickoff reconciled late passes the waiting only if it is older", () => {
    const { caches, woken, start } = world(1);
    start("busy");
    expect(start("waits", { createdAt: "2026-01-01T00:00:05Z" })).toBe(false);
    caches.results.upsert(result("busy", 0));
    expect(woken).toEqual(["waits"]);
    // A kickoff created earlier but reconciled only now may go first: the order is by age, the freed slot is one.
    expect(start("earlier", { createdAt: "2026-01-01T00:00:01Z" })).toBe(true);
    expect(start("waits", { createdAt: "2026-01-01T00:00:05Z" })).toBe(false);
    expect(start("later", { createdAt: "2026-01-01T00:00:09Z" })).toBe(false);
    caches.results.upsert(result("earlier", 0));
    expect(woken).toEqual(["waits", "waits"]);
    expect(start("later", { createdAt: "2026-01-01T00:00:09Z" })).toBe(false);
    expect(start("waits", { createdAt: "2026-01-01T00:00:05Z" })).toBe(true);
  });

  it("frees a slot when the task ends before its pod was seen running: Job Complete, Failed, deleted, or its result", () => {
    const { caches, limit, woken, start } = world(4);
    for (const name of ["complete", "failed", "deleted", "reported", "waited"]) start(name);
    expect([limit.startingCount, limit.waitingCount]).toEqual([4, 1]);

    caches.jobs.upsert(job("complete", 0, { succeeded: 1, conditions: [{ type: "Complete", status: "True" }] }));
    expect(woken).toEqual(["waited"]);
    expect(start("waited")).toBe(true);
    expect(limit.startingCount).toBe(4);

    caches.jobs.upsert(
      job("failed", 0, { conditions: [{ type: "Failed", status: "True", reason: "BackoffLimitExceeded" }] }),
    );
    expect(limit.startingCount).toBe(3);
    caches.jobs.upsert(job("deleted", 0, {}, true));
    expect(limit.startingCount).toBe(2);
    // A runner's failure report (`<pod>-failed`) counts as much as a success: the pod ran.
    caches.results.upsert(result("reported", 0, `${taskJobName("reported", 0)}-abcde-failed`));
    expect(limit.startingCount).toBe(1);
    limit.jobChanged("delete", job("waited", 0));
    expect(limit.startingCount).toBe(0);
  });

  it("frees a slot when the Job goes away, and for a reconcile that got a slot but created no Job", () => {
    const { caches, limit, woken, start } = world(1);
    expect(start("gone")).toBe(true);
    expect(start("next")).toBe(false);
    limit.jobChanged("delete", job("gone", 0));
    expect(woken).toEqual(["next"]);

    // The reconcile's Job create fails: the slot goes back when it settles.
    expect(limit.tryStart({ execution: `${NS}/next`, job: `${NS}/next-0`, running: false, createdAt: "" })).toBe(true);
    expect(start("third")).toBe(false);
    expect(limit.startingCount).toBe(1);
    limit.settle(`${NS}/next`);
    expect(limit.startingCount).toBe(0);
    expect(woken).toEqual(["next", "third"]);
    expect(caches.jobs.list()).toHaveLength(1);
  });

  it("passes the turn on when a waiting execution needs no slot any more (stopped, finished or deleted)", () => {
    const { caches, limit, woken, start } = world(1);
    start("busy");
    start("stopped", { createdAt: "2026-01-01T00:00:01Z" });
    start("deleted", { createdAt: "2026-01-01T00:00:02Z" });
    start("last", { createdAt: "2026-01-01T00:00:03Z" });
    caches.results.upsert(result("busy", 0));
    expect(woken).toEqual(["stopped"]);
    // Its reconcile decides nothing to start (it was stopped meanwhile).
    limit.forget(`${NS}/stopped`);
    expect(woken).toEqual(["stopped", "deleted"]);
    caches.executions.upsert(execution("deleted"));
    limit.forget(`${NS}/deleted`);
    expect(woken).toEqual(["stopped", "deleted", "last"]);
    expect(limit.waitingCount).toBe(1);
  });

  it("does not count a Job first seen with its result already there (the caches filled after a restart)", () => {
    const { caches, limit } = world(1);
    caches.results.upsert(result("earlier", 0));
    caches.jobs.upsert(job("earlier", 0));
    caches.jobs.upsert(job("ready", 0, { active: 1, ready: 1 }));
    caches.jobs.upsert(job("pending", 0, { active: 1, ready: 0 }));
    expect(limit.startingCount).toBe(1);
  });

  it("frees a whole project's slot with any of its tasks' results, and counts no project Job that reported", () => {
    const { caches, limit } = world(2);
    const project = (name: string): JobObject => ({
      ...job(name, 0),
      metadata: { ...job(name, 0).metadata, name: projectJobName(name) },
    });
    expect(
      limit.tryStart({
        execution: `${NS}/whole`,
        job: `${NS}/${projectJobName("whole")}`,
        running: false,
        createdAt: "",
      }),
    ).toBe(true);
    caches.jobs.upsert(project("whole"));
    limit.settle(`${NS}/whole`);
    expect(limit.startingCount).toBe(1);
    // Its pod runs: its second task's steps came (its first task's need not come first, nor at all).
    caches.results.upsert(result("whole", 1, `${projectJobName("whole")}-abcde-steps-1`));
    expect(limit.startingCount).toBe(0);
    // After a restart: a project Job first seen with a result of its execution there already.
    caches.results.upsert(result("earlier", 2));
    caches.jobs.upsert(project("earlier"));
    expect(limit.startingCount).toBe(0);
  });

  it("with limit 0 gives every start a slot and still counts them", () => {
    const { limit, woken, start } = world(0);
    for (let i = 0; i < 500; i++) expect(start(`e${i}`)).toBe(true);
    expect([limit.startingCount, limit.waitingCount]).toEqual([500, 0]);
    expect(woken).toEqual([]);
  });

  it("sharded, counts and serves only the executions of this replica's shards", () => {
    const owned = new Set(["crews/mine-1", "crews/mine-2", "crews/mine-3"]);
    const { caches, limit, woken, start } = world(1, (key) => owned.has(key));
    // Another replica's task starting does not take this replica's slot.
    caches.jobs.upsert(job("theirs", 0));
    expect(start("mine-1")).toBe(true);
    expect(start("mine-2", { createdAt: "2026-01-01T00:00:01Z" })).toBe(false);
    expect(start("mine-3", { createdAt: "2026-01-01T00:00:02Z" })).toBe(false);
    expect([limit.startingCount, limit.waitingCount]).toEqual([1, 2]);
    // mine-2's shard moves to another replica: it waits there, mine-3 is next here.
    owned.delete("crews/mine-2");
    caches.jobs.upsert(job("mine-1", 0, { ready: 1 }));
    expect(woken).toEqual(["mine-3"]);
    expect(limit.waitingCount).toBe(1);
  });

  it("sharded, an execution whose shard moves away leaves the line at once: the slot it was woken for goes to the next", () => {
    const owned = new Set(["crews/mine-1", "crews/mine-2", "crews/mine-3"]);
    const { caches, limit, woken, start } = world(1, (key) => owned.has(key));
    expect(start("mine-1")).toBe(true);
    expect(start("mine-2", { createdAt: "2026-01-01T00:00:01Z" })).toBe(false);
    expect(start("mine-3", { createdAt: "2026-01-01T00:00:02Z" })).toBe(false);
    caches.jobs.upsert(job("mine-1", 0, { ready: 1 }));
    expect(woken).toEqual(["mine-2"]);
    // mine-2's shard moves to another replica before its reconcile here: this replica's workers skip it, so the slot
    // it was woken for would wait for the next slot to free (none may: nothing else is starting).
    owned.delete("crews/mine-2");
    limit.ownershipChanged();
    expect(woken).toEqual(["mine-2", "mine-3"]);
    expect(limit.waitingCount).toBe(1);
    expect(start("mine-3", { createdAt: "2026-01-01T00:00:02Z" })).toBe(true);
    // Back here later, it queues anew (its new owner may have started it meanwhile; its reconcile looks again).
    owned.add("crews/mine-2");
    expect(start("mine-2", { createdAt: "2026-01-01T00:00:01Z" })).toBe(false);
    expect(limit.waitingCount).toBe(1);
  });
});
