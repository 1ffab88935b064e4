import { describe, expect, test } from "vitest";
import type { V1Pod } from "@kubernetes/client-node";
import { podPhase, podStatus, type ContainerRun, type PodRun } from "./pod-status.ts";

const t0 = new Date("2026-01-01T00:00:00.000Z");
const running = (name: string): ContainerRun => ({
  name,
  image: "img",
  restartCount: 0,
  state: { kind: "running", startedAt: t0, pid: 42 },
});
const exited = (name: string, exitCode: number): ContainerRun => ({
  name,
  image: "img",
  restartCount: 0,
  state: {
    kind: "terminated",
    exitCode,
    reason: exitCode ? "Error" : "Completed",
    startedAt: t0,
    finishedAt: t0,
    pid: 42,
  },
});
const run = (containers: ContainerRun[], extra: Partial<PodRun> = {}): PodRun => ({
  startTime: t0,
  sandboxReady: true,
  initContainers: [],
  containers,
  ...extra,
});

describe("podPhase", () => {
  test("follows the containers: Running, then Succeeded when all exit 0, Failed when one does not", () => {
    expect(podPhase(run([running("a"), exited("b", 0)]), "Never")).toBe("Running");
    expect(podPhase(run([exited("a", 0), exited("b", 0)]), "Never")).toBe("Succeeded");
    expect(podPhase(run([exited("a", 0), exited("b", 2)]), "Never")).toBe("Failed");
  });

  test("a failed init container fails a Never pod and keeps others Pending", () => {
    const failedInit = run([], { initContainers: [exited("init", 1)] });
    expect(podPhase(failedInit, "Never")).toBe("Failed");
    expect(podPhase(failedInit, "OnFailure")).toBe("Pending");
  });

  test("a failure set by the node (DeadlineExceeded) wins", () => {
    expect(podPhase(run([running("a")], { failure: { reason: "DeadlineExceeded", message: "" } }), "Never")).toBe(
      "Failed",
    );
  });
});

describe("podStatus", () => {
  const pod: V1Pod = {
    spec: { restartPolicy: "Never", containers: [] },
    status: { conditions: [{ type: "PodScheduled", status: "True", lastTransitionTime: t0 }] },
  };

  test("reports exit codes, keeps PodScheduled and marks a finished pod not Ready with PodCompleted", () => {
    const status = podStatus(pod, run([exited("main", 1)]), t0);
    expect(status.phase).toBe("Failed");
    expect(status.containerStatuses).toEqual([
      expect.objectContaining({
        name: "main",
        ready: false,
        state: {
          terminated: expect.objectContaining({ exitCode: 1, reason: "Error", finishedAt: "2026-01-01T00:00:00Z" }),
        },
      }),
    ]);
    const conditions = status.conditions as { type: string; status: string; reason?: string }[];
    expect(conditions.map((c) => [c.type, c.status])).toEqual([
      ["PodScheduled", "True"],
      ["PodReadyToStartContainers", "False"],
      ["Initialized", "True"],
      ["ContainersReady", "False"],
      ["Ready", "False"],
    ]);
    expect(conditions.find((c) => c.type === "Ready")?.reason).toBe("PodCompleted");
  });

  test("a running pod is Ready", () => {
    const status = podStatus(pod, run([running("main")]), t0);
    expect(status.phase).toBe("Running");
    expect((status.conditions as { type: string; status: string }[]).find((c) => c.type === "Ready")?.status).toBe(
      "True",
    );
  });
});
