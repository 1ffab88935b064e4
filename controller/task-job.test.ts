import { describe, expect, it } from "vitest";
import { crewSpec } from "../core/crew-resource.ts";
import type { TaskAssignment } from "../core/task-assignment.ts";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { KubernetesTaskIO } from "../runner/kubernetes-io.ts";
import { ASSIGNMENT_DIR, ASSIGNMENT_FILE, CONTEXT_FILES } from "../kube/task-names.ts";
import { CONFIG_MAP_LIMIT, taskConfigMap, taskInputs, taskJob } from "./task-job.ts";

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
  tools: { mcpServers: [], allowedHosts: [] },
  runtime: "kubecrew",
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
    // The runner is not PID 1 (pause is), so a SIGTERM before Node handles it still ends the task.
    expect(pod.shareProcessNamespace).toBe(true);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const container = pod.containers[0];
    expect(container.image).toBe("kubecrew:test");
    expect(container.terminationMessagePolicy).toBe("FallbackToLogsOnError");
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
    // The pod's name and namespace from the Downward API: its failed attempt's result and its spans name them.
    expect(container.env).toContainEqual({ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } });
    expect(container.env).toContainEqual({
      name: "POD_NAMESPACE",
      valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } },
    });
  });

  it("hands MCP header Secrets to the runner as the variables it reads them from, each once", () => {
    const header = (name: string, key: string) => ({
      name: "Authorization",
      valueFrom: { secretKeyRef: { name, key } },
    });
    const server = { transport: "sse" as const, timeoutSeconds: 5, url: "http://mcp.internal/sse" };
    const withTools: TaskAssignment = {
      ...assignment,
      tools: {
        mcpServers: [
          { ...server, name: "a", headers: [header("mcp-token", "token"), { name: "X-Team", value: "7" }] },
          { ...server, name: "b", headers: [header("mcp-token", "token"), header("other", "k")] },
        ],
        allowedHosts: [],
      },
    };
    const env = (taskJob(ref, withTools, spec.runner, settings) as Loose).spec.template.spec.containers[0].env;
    const secretVars = env.filter((e: Loose) => e.name.startsWith("KUBECREW_SECRET_"));
    expect(secretVars).toEqual([
      { name: "KUBECREW_SECRET_MCP_TOKEN_TOKEN", valueFrom: { secretKeyRef: { name: "mcp-token", key: "token" } } },
      { name: "KUBECREW_SECRET_OTHER_K", valueFrom: { secretKeyRef: { name: "other", key: "k" } } },
    ]);
  });

  it("gives a delegating task its coworkers' own keys and, when a coworker has apps, the apps credential", () => {
    const coworker = (name: string, secret: string, apps: string[] = []) => ({
      agent: {
        ...spec.agents[0]!,
        name,
        role: name,
        apps,
        llm: { provider: "openai" as const, model: "gpt", apiKeySecretRef: { name: secret, key: "key" } },
      },
      tools: { mcpServers: [], allowedHosts: [] },
    });
    const manager: TaskAssignment = {
      ...assignment,
      coworkers: [coworker("a", "key-a"), coworker("b", "key-b", ["gmail"]), coworker("c", "key-a")],
    };
    const apps = { url: "http://integrations/v1/mcp", secretName: "exec-apps" };
    const pod = (taskJob(ref, manager, spec.runner, settings, [], apps) as Loose).spec.template.spec;
    const env = pod.containers[0].env;
    expect(env.filter((e: Loose) => e.name.startsWith("KUBECREW_SECRET_") || e.name.includes("LLM_API_KEY"))).toEqual([
      { name: "KUBECREW_LLM_API_KEY", valueFrom: { secretKeyRef: { name: "llm", key: "key" } } },
      { name: "KUBECREW_SECRET_KEY_A_KEY", valueFrom: { secretKeyRef: { name: "key-a", key: "key" } } },
      { name: "KUBECREW_SECRET_KEY_B_KEY", valueFrom: { secretKeyRef: { name: "key-b", key: "key" } } },
    ]);
    expect(env).toContainEqual({ name: "KUBECREW_APPS_URL", value: apps.url });
    expect(pod.volumes).toContainEqual(expect.objectContaining({ name: "apps-credential" }));
    // Without a coworker that has apps, the task's pod gets no credential.
    const plain = (
      taskJob(ref, { ...manager, coworkers: [coworker("a", "key-a")] }, spec.runner, settings, [], apps) as Loose
    ).spec.template.spec;
    expect(plain.volumes).not.toContainEqual(expect.objectContaining({ name: "apps-credential" }));
  });

  it("fails a tool call's Job on the runner's first non-zero exit, and replaces a disrupted pod without counting it", () => {
    const toolCall: TaskAssignment = {
      ...assignment,
      task: { ...assignment.task, toolCall: { tool: "http_request", arguments: "{}" } },
    };
    const job = taskJob(ref, toolCall, spec.runner, settings) as Loose;
    const container = job.spec.template.spec.containers[0].name;
    // The disruption rule first: an evicted runner exits non-zero too (SIGTERM), which the FailJob rule would match.
    expect(job.spec.podFailurePolicy).toEqual({
      rules: [
        { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget", status: "True" }] },
        { action: "FailJob", onExitCodes: { containerName: container, operator: "NotIn", values: [0] } },
      ],
    });
    expect(job.spec.template.spec.restartPolicy).toBe("Never");
    // An agent's task keeps runner.retries, pod failures of any kind counting: the model may answer better next time.
    const agentTask = taskJob(ref, assignment, spec.runner, settings) as Loose;
    expect(agentTask.spec.backoffLimit).toBe(2);
    expect(agentTask.spec.podFailurePolicy).toBeUndefined();
  });

  it("runs crewai-runtime tasks in the crewai runner image unless the crew names its own", () => {
    const withCrewai = { ...settings, crewaiImage: "kubecrew-crewai:test" };
    const image = (a: TaskAssignment, runner = spec.runner) =>
      (taskJob(ref, a, runner, withCrewai) as Loose).spec.template.spec.containers[0].image;
    const crewai: TaskAssignment = { ...assignment, runtime: "crewai" };
    expect(image(crewai)).toBe("kubecrew-crewai:test");
    expect(image(assignment)).toBe("kubecrew:test");
    expect(image(crewai, { ...spec.runner, image: "team/crew:1" })).toBe("team/crew:1");
    // A controller without a crewai image set keeps the one image for both.
    expect((taskJob(ref, crewai, spec.runner, settings) as Loose).spec.template.spec.containers[0].image).toBe(
      "kubecrew:test",
    );
  });

  it("puts the whole assignment in the ConfigMap", () => {
    const cm = taskConfigMap(ref, assignment) as Loose;
    expect(cm.metadata.name).toBe(`${ref.name}-0`);
    expect(JSON.parse(cm.data["assignment.json"])).toEqual(assignment);
  });
});

describe("task inputs larger than a ConfigMap", () => {
  it("move the largest context outputs into ConfigMaps of their own, each mounted for the runner", async () => {
    const big = (c: string) => c.repeat(700 * 1024);
    const withContext: TaskAssignment = {
      ...assignment,
      task: { ...assignment.task, index: 2 },
      context: [
        { task: "a", output: big("a") },
        { task: "b", output: "small" },
        { task: "c", output: big("c") },
      ],
    };
    const inputs = taskInputs(ref, withContext);
    const sizes = inputs.configMaps.map((cm) =>
      Object.values((cm as Loose).data as Record<string, string>).reduce((n, v) => n + v.length, 0),
    );
    for (const size of sizes) expect(size).toBeLessThanOrEqual(CONFIG_MAP_LIMIT);
    expect(inputs.configMaps.map((cm) => cm.metadata!.name)).toEqual([`${ref.name}-2`, `${ref.name}-2-c0`]);
    const job = taskJob(ref, withContext, spec.runner, settings, inputs.contextMounts) as Loose;
    expect(job.spec.template.spec.volumes).toContainEqual({
      name: "context-0",
      configMap: { name: `${ref.name}-2-c0` },
    });

    // What the runner in the pod reads back: the whole assignment.
    const root = mkdtempSync(join(tmpdir(), "kubecrew-pod-"));
    const write = (dir: string, data: Record<string, string>) => {
      mkdirSync(join(root, dir), { recursive: true });
      for (const [k, v] of Object.entries(data)) writeFileSync(join(root, dir, k), v);
    };
    // The index names each file at its mountPath in the pod; here the mounts are under `root`.
    const data = { ...(inputs.configMaps[0] as Loose).data } as Record<string, string>;
    const index = JSON.parse(data[CONTEXT_FILES]!) as Record<string, string>;
    data[CONTEXT_FILES] = JSON.stringify(Object.fromEntries(Object.entries(index).map(([j, p]) => [j, join(root, p)])));
    write(ASSIGNMENT_DIR, data);
    for (const [i, m] of inputs.contextMounts.entries()) write(m.mountPath, (inputs.configMaps[i + 1] as Loose).data);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: "c", server: "http://127.0.0.1:1" }],
      users: [{ name: "u" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    const io = new KubernetesTaskIO({
      assignmentPath: join(root, ASSIGNMENT_DIR, ASSIGNMENT_FILE),
      config: {},
      kubeConfig,
    });
    expect(await io.readAssignment()).toEqual(withContext);
  });

  it("refuses an assignment that cannot fit even without its context", () => {
    const huge: TaskAssignment = { ...assignment, inputs: { blob: "x".repeat(CONFIG_MAP_LIMIT + 1) } };
    expect(() => taskInputs(ref, huge)).toThrow(/above a ConfigMap's/);
  });
});
