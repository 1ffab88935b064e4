import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../core/config.ts";
import { crewSpec } from "../core/crew-resource.ts";
import type { TaskAssignment } from "../core/task-assignment.ts";
import { controllerConfigSchema } from "./config.ts";
import { taskJob } from "./task-job.ts";

const spec = crewSpec.parse({
  agents: [
    { name: "local", role: "R", goal: "g", llm: { provider: "local", model: "smollm2-135m" } },
    { name: "hosted", role: "R", goal: "g", llm: { provider: "openai", model: "gpt" } },
  ],
  tasks: [{ name: "one", description: "d", expectedOutput: "o", agent: "local" }],
});
const [local, hosted] = spec.agents as [TaskAssignment["agent"], TaskAssignment["agent"]];
const assignment = (agent: TaskAssignment["agent"], coworkers?: TaskAssignment["coworkers"]): TaskAssignment => ({
  execution: { id: "0d5c1f5e-6a3b-4c0f-9a43-3f6f1c1e7a10", crew: "c", namespace: "team", uid: "uid-1" },
  task: { index: 0, name: "one", description: "d", expectedOutput: "o" },
  agent,
  context: [],
  inputs: {},
  tools: { mcpServers: [], allowedHosts: [] },
  runtime: "kubecrew",
  ...(coworkers ? { coworkers } : {}),
});
const ref = { name: "0d5c1f5e-6a3b-4c0f-9a43-3f6f1c1e7a10", namespace: "team", uid: "uid-1", crew: "c" };
const claim = { persistentVolumeClaim: { claimName: "models", readOnly: true } };
const settings = {
  defaultImage: "kubecrew:test",
  defaultServiceAccount: "kubecrew-runner",
  runnerCommand: ["kubecrew", "runner"],
  modelVolume: claim,
};
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are asserted field by field
type Loose = any;
const pod = (a: TaskAssignment, s: Parameters<typeof taskJob>[3] = settings) =>
  (taskJob(ref, a, spec.runner, s) as Loose).spec.template.spec;

describe("the local provider's model volume in task pods", () => {
  it("is mounted read-only at /models, named by KUBECREW_MODEL_DIR, in the pod of a task whose agent runs a local model", () => {
    const spec = pod(assignment(local));
    expect(spec.volumes).toContainEqual({ name: "models", ...claim });
    expect(spec.containers[0].volumeMounts).toContainEqual({ name: "models", mountPath: "/models", readOnly: true });
    expect(spec.containers[0].env).toContainEqual({ name: "KUBECREW_MODEL_DIR", value: "/models" });
  });

  it("is mounted when only a coworker the agent may delegate to runs a local model", () => {
    const spec = pod(assignment(hosted, [{ agent: local, tools: { mcpServers: [], allowedHosts: [] } }]));
    expect(spec.volumes.map((v: Loose) => v.name)).toContain("models");
  });

  it("is not mounted in other tasks' pods, nor when the controller has none", () => {
    for (const spec of [pod(assignment(hosted)), pod(assignment(local), { ...settings, modelVolume: undefined })]) {
      expect(spec.volumes.map((v: Loose) => v.name)).not.toContain("models");
      expect(spec.containers[0].env.map((e: Loose) => e.name)).not.toContain("KUBECREW_MODEL_DIR");
    }
  });
});

describe("KUBECREW_RUNNER_MODEL_VOLUME", () => {
  it("is a volume source in JSON", () => {
    const config = parseConfig(controllerConfigSchema, { KUBECREW_RUNNER_MODEL_VOLUME: JSON.stringify(claim) });
    expect(config.runnerModelVolume).toEqual(claim);
    expect(parseConfig(controllerConfigSchema, {}).runnerModelVolume).toBeUndefined();
  });

  it.each([
    ["not JSON", "{persistentVolumeClaim", /KUBECREW_RUNNER_MODEL_VOLUME: is not JSON/],
    [
      "two sources",
      JSON.stringify({ ...claim, hostPath: { path: "/m" } }),
      /KUBECREW_RUNNER_MODEL_VOLUME: must be one/,
    ],
    ["not an object", '"models"', /KUBECREW_RUNNER_MODEL_VOLUME/],
  ])("refuses %s, naming the variable", (_name, value, message) => {
    const parse = () => parseConfig(controllerConfigSchema, { KUBECREW_RUNNER_MODEL_VOLUME: value });
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(message);
  });
});
