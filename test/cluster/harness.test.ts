import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import type { V1EnvVar, V1Job, V1Pod, V1Volume, V1VolumeMount } from "@kubernetes/client-node";
import { eventually, useNamespace, waitForJobCondition } from "../support/cluster.ts";

// The tests of the test cluster itself: a real kube-apiserver and kube-controller-manager, and the local node running
// the pods as processes. Pods and tests share this machine's filesystem, so pods report back through files in `out`.
const ns = useNamespace("harness");
const out = mkdtempSync(join(tmpdir(), "kubecrew-harness-"));
const repo = join(import.meta.dirname, "..", "..");
const pinnedNode = (
  JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { devDependencies: { node: string } }
).devDependencies.node;

interface JobOptions {
  command: string[];
  backoffLimit?: number;
  env?: V1EnvVar[];
  volumes?: V1Volume[];
  volumeMounts?: V1VolumeMount[];
  serviceAccountName?: string;
}

function job(name: string, options: JobOptions): V1Job {
  return {
    metadata: { name },
    spec: {
      backoffLimit: options.backoffLimit ?? 0,
      template: {
        spec: {
          restartPolicy: "Never",
          serviceAccountName: options.serviceAccountName,
          volumes: options.volumes,
          containers: [
            {
              name: "main",
              image: "registry.invalid/ignored-by-the-local-node:1",
              command: options.command,
              env: options.env,
              volumeMounts: options.volumeMounts,
            },
          ],
        },
      },
    },
  };
}

const nodeScript = (script: string) => ["node", "-e", script];

async function createJob(name: string, options: JobOptions): Promise<void> {
  await ns.batch.createNamespacedJob({ namespace: ns.name, body: job(name, options) });
}

async function jobPods(name: string): Promise<V1Pod[]> {
  const list = await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: `job-name=${name}` });
  return list.items;
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, "utf8")) as T;
}

test("a Job whose pod runs `node -e` and exits 0 becomes Complete", async () => {
  await createJob("exits-zero", { command: nodeScript("process.exit(0)") });

  const done = await waitForJobCondition(ns, "exits-zero", "Complete");

  expect(done.status?.succeeded).toBe(1);
  const [pod] = await jobPods("exits-zero");
  expect(pod?.status?.phase).toBe("Succeeded");
  expect(pod?.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: "Completed" });
});

test("a Job whose pod exits 1 with backoffLimit 1 becomes Failed after two pods", async () => {
  await createJob("exits-one", { command: nodeScript("process.exit(1)"), backoffLimit: 1 });

  const failed = await waitForJobCondition(ns, "exits-one", "Failed", 120_000);

  expect(failed.status?.failed).toBe(2);
  expect(failed.status?.conditions?.find((c) => c.type === "Failed")?.reason).toBe("BackoffLimitExceeded");
  const pods = await jobPods("exits-one");
  expect(pods).toHaveLength(2);
  for (const pod of pods) {
    expect(pod.status?.phase).toBe("Failed");
    expect(pod.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 1, reason: "Error" });
  }
});

describe.each(["Background", "Foreground"])("deleting a Job with propagationPolicy %s", (propagationPolicy) => {
  test("kills its process", async () => {
    const name = `heartbeat-${propagationPolicy.toLowerCase()}`;
    const heartbeat = join(out, `${name}.txt`);
    await createJob(name, {
      command: nodeScript(
        'setInterval(() => require("node:fs").writeFileSync(process.env.HEARTBEAT, String(Date.now())), 100)',
      ),
      env: [{ name: "HEARTBEAT", value: heartbeat }],
    });
    await eventually(() => existsSync(heartbeat) && Date.now() - Number(readFileSync(heartbeat, "utf8")) < 1000, {
      message: "the pod's heartbeat",
    });

    await ns.batch.deleteNamespacedJob({ name, namespace: ns.name, propagationPolicy });

    await eventually(async () => (await jobPods(name)).length === 0, { message: "the Job's pod to be gone" });
    const last = readFileSync(heartbeat, "utf8");
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(readFileSync(heartbeat, "utf8")).toBe(last);
  });
});

test("a pod sees a secretKeyRef env value, fieldRefs and a ConfigMap volume's file at its mountPath, and runs the pinned Node", async () => {
  await ns.core.createNamespacedSecret({
    namespace: ns.name,
    body: { metadata: { name: "api-credentials" }, stringData: { "api-key": "s3cret-from-a-secret" } },
  });
  await ns.core.createNamespacedConfigMap({
    namespace: ns.name,
    body: { metadata: { name: "crew-settings" }, data: { "settings.json": '{"process":"sequential"}' } },
  });
  const report = join(out, "environment.json");
  await createJob("sees-config", {
    command: nodeScript(`
      const fs = require("node:fs");
      let writable = true;
      try { fs.writeFileSync("/etc/kubecrew/mine", "x"); } catch (error) { writable = error.code; }
      fs.writeFileSync(process.env.OUT, JSON.stringify({
        apiKey: process.env.API_KEY,
        podName: process.env.POD_NAME,
        namespace: process.env.POD_NAMESPACE,
        settings: fs.readFileSync("/etc/kubecrew/settings.json", "utf8"),
        writable,
        workingDir: process.cwd(),
        nodeVersion: process.version,
        kubecrewOnPath: require("node:child_process").execSync("command -v kubecrew", { encoding: "utf8" }).trim(),
      }));
    `),
    env: [
      { name: "OUT", value: report },
      { name: "API_KEY", valueFrom: { secretKeyRef: { name: "api-credentials", key: "api-key" } } },
      { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
    ],
    volumes: [{ name: "settings", configMap: { name: "crew-settings" } }],
    volumeMounts: [{ name: "settings", mountPath: "/etc/kubecrew", readOnly: true }],
  });

  await waitForJobCondition(ns, "sees-config", "Complete");

  const [pod] = await jobPods("sees-config");
  expect(readJson(report)).toEqual({
    apiKey: "s3cret-from-a-secret",
    podName: pod?.metadata?.name,
    namespace: ns.name,
    settings: '{"process":"sequential"}',
    writable: "EROFS", // a ConfigMap volume is read-only, as the kubelet mounts it
    workingDir: "/",
    nodeVersion: `v${pinnedNode}`,
    kubecrewOnPath: expect.stringMatching(/\/kubecrew$/),
  });
  // The mount was the pod's own (a mount namespace): nothing was made at /etc/kubecrew on the machine.
  expect(existsSync("/etc/kubecrew")).toBe(false);
});

test("a pod acting as its service account is allowed what its Role grants and denied the rest", async () => {
  await ns.core.createNamespacedServiceAccount({ namespace: ns.name, body: { metadata: { name: "reader" } } });
  await ns.rbac.createNamespacedRole({
    namespace: ns.name,
    body: {
      metadata: { name: "configmap-reader" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }],
    },
  });
  await ns.rbac.createNamespacedRoleBinding({
    namespace: ns.name,
    body: {
      metadata: { name: "reader-reads-configmaps" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "configmap-reader" },
      subjects: [{ kind: "ServiceAccount", name: "reader", namespace: ns.name }],
    },
  });
  const report = join(out, "rbac.json");
  await createJob("rbac-probe", {
    command: ["node", join(repo, "test", "cluster", "fixtures", "rbac-probe.ts")],
    env: [{ name: "OUT", value: report }],
    serviceAccountName: "reader",
  });

  await waitForJobCondition(ns, "rbac-probe", "Complete");

  expect(readJson(report)).toEqual({
    username: `system:serviceaccount:${ns.name}:reader`,
    namespace: ns.name,
    listConfigMaps: 200,
    listSecrets: 403,
  });
});

test("a pod past its activeDeadlineSeconds is killed and Failed with reason DeadlineExceeded", async () => {
  const heartbeat = join(out, "deadline.txt");
  await ns.core.createNamespacedPod({
    namespace: ns.name,
    body: {
      metadata: { name: "over-deadline" },
      spec: {
        restartPolicy: "Never",
        activeDeadlineSeconds: 2,
        containers: [
          {
            name: "main",
            image: "registry.invalid/ignored:1",
            command: nodeScript(
              'setInterval(() => require("node:fs").writeFileSync(process.env.OUT, String(Date.now())), 100)',
            ),
            env: [{ name: "OUT", value: heartbeat }],
          },
        ],
      },
    },
  });

  const pod = await eventually(
    async () => {
      const current = await ns.core.readNamespacedPod({ name: "over-deadline", namespace: ns.name });
      return current.status?.phase === "Failed" ? current : undefined;
    },
    { message: "the pod to fail", timeoutMs: 30_000 },
  );

  expect(pod.status?.reason).toBe("DeadlineExceeded");
  const last = readFileSync(heartbeat, "utf8");
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(readFileSync(heartbeat, "utf8")).toBe(last);
});

test("a pod's output is readable through the pods/log API, as `kubectl logs` reads it", async () => {
  await createJob("says-hello", { command: nodeScript('console.log("hello from the local node")') });
  await waitForJobCondition(ns, "says-hello", "Complete");
  const [pod] = await jobPods("says-hello");

  const log = await ns.core.readNamespacedPodLog({ name: pod!.metadata!.name!, namespace: ns.name });

  expect(log).toBe("hello from the local node\n");
});

test("a container's termination message is reported in its terminated state", async () => {
  await createJob("leaves-a-message", {
    command: nodeScript(`
      require("node:fs").writeFileSync("/dev/termination-log", "task failed: boom");
      process.exit(2);
    `),
  });
  await waitForJobCondition(ns, "leaves-a-message", "Failed");

  const [pod] = await jobPods("leaves-a-message");

  expect(pod?.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
    exitCode: 2,
    reason: "Error",
    message: "task failed: boom",
  });
});
