/**
 * The local provider's models in a cluster (controller.runner.models): the chart hands the controller the volume,
 * the controller mounts it in the pods of tasks that run a local model. Rendered by the pinned helm; the controller's
 * variable is read by the controller's own configuration and the task pod built by its own taskJob.
 */
import { describe, expect, it } from "vitest";
import type { V1Container, V1PodSpec } from "@kubernetes/client-node";
import { parseConfig } from "../../core/config.ts";
import { crewSpec } from "../../core/crew-resource.ts";
import type { TaskAssignment } from "../../core/task-assignment.ts";
import { controllerConfigSchema } from "../../controller/config.ts";
import { taskJob } from "../../controller/task-job.ts";
import { chartDir, container, envOf, find, helm, ofKind, render, template, withValuesFile } from "./support/helm.ts";

const controllerOf = (values: object) => container(find(render({ values }), "Deployment", "kubecrew-controller"));
const models = (m: object) => ({ controller: { runner: { models: m } } });
/** Where the test says the models come from: addresses of its own, not any real index or hub. */
const INDEX = "https://index.example/simple";
const HUB = "https://hub.example";

/** The task pod the controller would make, configured from the rendered controller's environment. */
function taskPodFrom(controller: V1Container, provider: "local" | "openai"): V1PodSpec {
  // The runner's variables only: the others come from Secrets this render does not hold.
  const env = Object.fromEntries(
    [...envOf(controller)].flatMap(([k, e]) => (k.startsWith("KUBECREW_RUNNER_") && e.value ? [[k, e.value]] : [])),
  );
  const config = parseConfig(controllerConfigSchema, env);
  const spec = crewSpec.parse({
    agents: [{ name: "a", role: "R", goal: "g", llm: { provider, model: "smollm2-135m" } }],
    tasks: [{ name: "t", description: "d", expectedOutput: "o", agent: "a" }],
  });
  const assignment: TaskAssignment = {
    execution: { id: "0d5c1f5e-6a3b-4c0f-9a43-3f6f1c1e7a10", crew: "c", namespace: "crews", uid: "u" },
    task: { index: 0, name: "t", description: "d", expectedOutput: "o" },
    agent: spec.agents[0]!,
    context: [],
    inputs: {},
    tools: { mcpServers: [], allowedHosts: [] },
    runtime: "kubecrew",
  };
  const job = taskJob({ name: "e", namespace: "crews", uid: "u", crew: "c" }, assignment, spec.runner, {
    defaultImage: config.runnerImage,
    defaultServiceAccount: config.runnerServiceAccount,
    runnerCommand: ["kubecrew", "runner"],
    ...(config.runnerModelVolume ? { modelVolume: config.runnerModelVolume } : {}),
  });
  return (job.spec as { template: { spec: V1PodSpec } }).template.spec;
}

describe("the local provider's model volume", () => {
  it("is none by default: no variable for the controller, no claim, no pull Job", () => {
    const manifests = render();
    expect(
      envOf(container(find(manifests, "Deployment", "kubecrew-controller"))).has("KUBECREW_RUNNER_MODEL_VOLUME"),
    ).toBe(false);
    expect(ofKind(manifests, "PersistentVolumeClaim")).toEqual([]);
    expect(ofKind(manifests, "Job")).toEqual([]);
  });

  it("mounts the volume given read-only at /models in the pods of tasks that run a local model, and no other", () => {
    const claim = { persistentVolumeClaim: { claimName: "team-models", readOnly: true } };
    const controller = controllerOf(models({ volume: claim }));
    const local = taskPodFrom(controller, "local");
    expect(local.volumes).toContainEqual({ name: "models", ...claim });
    expect(local.containers[0]!.volumeMounts).toContainEqual({ name: "models", mountPath: "/models", readOnly: true });
    expect(local.containers[0]!.env).toContainEqual({ name: "KUBECREW_MODEL_DIR", value: "/models" });
    const hosted = taskPodFrom(controller, "openai");
    expect(hosted.volumes!.map((v) => v.name)).not.toContain("models");
  });

  it("makes a claim filled by a Job of `kubecrew model pull` after install and upgrade, and mounts that claim", () => {
    const manifests = render({
      values: models({
        pull: {
          enabled: true,
          models: ["smollm2-135m", "hf:team/repo/m.gguf"],
          size: "2Gi",
          storageClassName: "fast",
          packageIndexUrl: INDEX,
          huggingFaceUrl: HUB,
        },
      }),
    });
    const pvc = find(manifests, "PersistentVolumeClaim", "kubecrew-models");
    expect(pvc.spec).toEqual({
      accessModes: ["ReadWriteOnce"],
      storageClassName: "fast",
      resources: { requests: { storage: "2Gi" } },
    });
    const job = find(manifests, "Job", "kubecrew-models-pull");
    expect(job.metadata.annotations).toMatchObject({ "helm.sh/hook": "post-install,post-upgrade" });
    const pod = (job.spec as { template: { spec: V1PodSpec } }).template.spec;
    expect(pod.containers.map((c) => c.args)).toEqual([
      ["model", "pull", "smollm2-135m"],
      ["model", "pull", "hf:team/repo/m.gguf"],
    ]);
    for (const c of pod.containers) {
      expect(c.env).toContainEqual({ name: "KUBECREW_MODEL_DIR", value: "/models" });
      // Where the models come from is the values': no address is built into kubecrew.
      expect(c.env).toContainEqual({ name: "KUBECREW_PACKAGE_INDEX_URL", value: INDEX });
      expect(c.env).toContainEqual({ name: "HF_ENDPOINT", value: HUB });
      expect(c.volumeMounts).toContainEqual({ name: "models", mountPath: "/models" });
      expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    }
    expect(pod.volumes).toContainEqual({ name: "models", persistentVolumeClaim: { claimName: "kubecrew-models" } });
    // Task pods read the claim the Job filled, read-only.
    const local = taskPodFrom(container(find(manifests, "Deployment", "kubecrew-controller")), "local");
    expect(local.volumes).toContainEqual({
      name: "models",
      persistentVolumeClaim: { claimName: "kubecrew-models", readOnly: true },
    });
  });

  it("refuses a pull of a model whose source is not given, naming the value to set", () => {
    const noIndex = template({ values: models({ pull: { enabled: true } }) });
    expect(noIndex.status).not.toBe(0);
    expect(noIndex.stderr).toContain(
      "controller.runner.models.pull.packageIndexUrl: smollm2-135m comes from a Python package index",
    );
    const noHub = template({ values: models({ pull: { enabled: true, models: ["hf:team/repo/m.gguf"] } }) });
    expect(noHub.status).not.toBe(0);
    expect(noHub.stderr).toContain("controller.runner.models.pull.huggingFaceUrl: hf:team/repo/m.gguf");
    // pip's own variable in the Job's environment names the index as well.
    const pipEnv = models({ pull: { enabled: true, extraEnv: [{ name: "PIP_INDEX_URL", value: INDEX }] } });
    expect(template({ values: pipEnv }).status).toBe(0);
  });

  it("passes helm lint with the pull Job, and the schema refuses two volume sources or an unknown key", () => {
    const values = models({ pull: { enabled: true, packageIndexUrl: INDEX } });
    const lint = withValuesFile(values, (file) => helm(["lint", "--strict", chartDir, "--values", file]));
    expect(lint.stdout).toContain("1 chart(s) linted, 0 chart(s) failed");
    const two = template({ values: models({ volume: { hostPath: { path: "/m" }, emptyDir: {} } }) });
    expect(two.status).not.toBe(0);
    expect(two.stderr).toMatch(/models.*volume/);
    const unknown = template({ values: models({ pvc: "x" }) });
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toMatch(/pvc/);
  });
});
