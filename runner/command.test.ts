import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { recordSpans, type SpanRecorder } from "../test/support/span-recorder.ts";
import { runAssignedTask, withPodResource } from "./command.ts";
import { runnerConfigFromEnv } from "./config.ts";
import { FileTaskIO } from "./io.ts";
import { testAssignment } from "./test-assignment.ts";

describe("withPodResource", () => {
  it("adds the pod's name and namespace to the resource attributes given, percent-encoded", () => {
    const env = { OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod", OTHER: "x" };
    expect(withPodResource(env, { podName: "e1-0-x7k2p", namespace: "team a" })).toEqual({
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,k8s.pod.name=e1-0-x7k2p,k8s.namespace.name=team%20a",
      OTHER: "x",
    });
    expect(withPodResource({}, { podName: "e1-0-x7k2p" })).toEqual({
      OTEL_RESOURCE_ATTRIBUTES: "k8s.pod.name=e1-0-x7k2p",
    });
  });

  it("leaves the environment as it is outside a pod", () => {
    const env = { OTEL_RESOURCE_ATTRIBUTES: "a=b" };
    expect(withPodResource(env, {})).toBe(env);
  });
});

describe("the task's span in a task pod", () => {
  let recorder: SpanRecorder;
  beforeEach(() => {
    recorder = recordSpans();
  });
  afterEach(() => recorder.stop());

  async function run(env: Record<string, string>) {
    const dir = await mkdtemp(join(tmpdir(), "kubecrew-runner-"));
    await writeFile(join(dir, "assignment.json"), JSON.stringify(testAssignment()));
    const io = new FileTaskIO({ assignment: join(dir, "assignment.json"), outcome: join(dir, "outcome.json") });
    const result = await runAssignedTask(io, { config: runnerConfigFromEnv(env), logger: silentLogger() });
    expect(result.error).toBeUndefined();
    return recorder.spans().find((s) => s.name === "task write")!;
  }

  it("names the task's Job (the name the controller gave it) when the runner runs in a pod", async () => {
    const task = await run({ POD_NAME: "0b7e8a52-5d6c-4f1e-9a3b-2c1d0e9f8a7b-1-x7k2p", POD_NAMESPACE: "team" });
    expect(task.attributes["k8s.job.name"]).toBe("0b7e8a52-5d6c-4f1e-9a3b-2c1d0e9f8a7b-1");
  });

  it("names no Job outside a pod (kubecrew dev)", async () => {
    expect((await run({})).attributes).not.toHaveProperty("k8s.job.name");
  });
});
