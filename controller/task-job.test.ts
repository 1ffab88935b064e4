import { describe, expect, it } from "vitest";
import { crewSpec } from "../core/crew.ts";
import type { TaskAssignment } from "../core/task-assignment.ts";
import { taskConfigMap, taskJob, taskJobName } from "./task-job.ts";

const spec = crewSpec.parse({
  agents: [
    {
      name: "w",
      role: "Writer",
      goal: "g",
      llm: { provider: "openai", model: "gpt", apiKeySecretRef: { name: "llm", key: "key" } },
    },
  ],
  tasks: [{ name: "one", description: "d", expectedOutput: "o", agent: "w" }],
  runner: { retries: 2, taskTimeoutSeconds: 90, serviceAccountName: "crew-runner" },
});
const assignment: TaskAssignment = {
  execution: { id: "0d5c1f5e-6a3b-4c0f-9a43-3f6f1c1e7a10", crew: "research", namespace: "team", uid: "uid-1" },
  task: { index: 0, name: "one", description: "d", expectedOutput: "o" },
  agent: spec.agents[0]!,
  context: [],
  inputs: {},
};
const ref = { name: assignment.execution.id, namespace: "team", uid: "uid-1", crew: "research" };
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are asserted field by field
type Loose = any;
const settings = {
  defaultImage: "kubecrew:test",
  defaultServiceAccount: "kubecrew-runner",
  runnerCommand: ["kubecrew", "runner", "--kubernetes", "--assignment"],
};

describe("task Job and ConfigMap", () => {
  it("names children <execution>-<index>, and keeps long names within 63 characters and stable", () => {
    expect(taskJobName("abc", 2)).toBe("abc-2");
    const long = "x".repeat(80);
    expect(taskJobName(long, 3).length).toBeLessThanOrEqual(63);
    expect(taskJobName(long, 3)).toBe(taskJobName(long, 3));
    expect(taskJobName(long, 3)).not.toBe(taskJobName("x".repeat(81), 3));
  });

  it("builds a hardened Job owned by the execution with the crew's runner settings and the key from a Secret", () => {
    const job = taskJob(ref, assignment, spec.runner, settings) as Loose;
    expect(job.metadata.name).toBe(`${ref.name}-0`);
    expect(job.metadata.ownerReferences).toEqual([
      {
        apiVersion: "kubecrew.io/v1alpha1",
        kind: "CrewExecution",
        name: ref.name,
        uid: "uid-1",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(job.metadata.labels).toMatchObject({ "kubecrew.io/execution": ref.name, "kubecrew.io/task": "one" });
    expect(job.spec).toMatchObject({ backoffLimit: 2, activeDeadlineSeconds: 90 });
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe("Never");
    expect(pod.serviceAccountName).toBe("crew-runner");
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const container = pod.containers[0];
    expect(container.image).toBe("kubecrew:test");
    expect(container.command).toEqual([
      "kubecrew",
      "runner",
      "--kubernetes",
      "--assignment",
      "/etc/kubecrew/assignment/assignment.json",
    ]);
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(container.env).toContainEqual({
      name: "KUBECREW_LLM_API_KEY",
      valueFrom: { secretKeyRef: { name: "llm", key: "key" } },
    });
    expect(pod.volumes).toContainEqual({ name: "assignment", configMap: { name: `${ref.name}-0` } });
    expect(container.volumeMounts).toContainEqual({ name: "tmp", mountPath: "/tmp" });
  });

  it("puts the whole assignment in the ConfigMap", () => {
    const cm = taskConfigMap(ref, assignment) as Loose;
    expect(cm.metadata.name).toBe(`${ref.name}-0`);
    expect(JSON.parse(cm.data["assignment.json"])).toEqual(assignment);
  });
});
