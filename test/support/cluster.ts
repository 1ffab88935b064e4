import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, inject } from "vitest";
import {
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
  type V1Job,
} from "@kubernetes/client-node";

/** An admin KubeConfig for the run's cluster (test/support/cluster-global-setup.ts provides its path). */
export function adminKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(inject("kubeconfig"));
  return kc;
}

export interface TestNamespace {
  /** The namespace's name; valid inside tests and hooks, not at collection time. */
  readonly name: string;
  readonly kubeconfigPath: string;
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly batch: BatchV1Api;
  readonly rbac: RbacAuthorizationV1Api;
  /** Generic client for any kind, custom resources included. */
  readonly objects: KubernetesObjectApi;
}

/**
 * A namespace of its own for the calling test file: created before its tests, deleted after them (the namespace
 * controller removes everything in it; the local node kills the processes of its pods).
 */
export function useNamespace(prefix = "test"): TestNamespace {
  let name: string | undefined;
  const kc = adminKubeConfig();
  const handle: TestNamespace = {
    get name() {
      if (!name) throw new Error("useNamespace(): the namespace exists only inside tests and hooks");
      return name;
    },
    kubeconfigPath: inject("kubeconfig"),
    kc,
    core: kc.makeApiClient(CoreV1Api),
    batch: kc.makeApiClient(BatchV1Api),
    rbac: kc.makeApiClient(RbacAuthorizationV1Api),
    objects: KubernetesObjectApi.makeApiClient(kc),
  };
  beforeAll(async () => {
    const candidate = `${prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, "-")
      .slice(0, 40)}-${randomBytes(3).toString("hex")}`;
    await handle.core.createNamespace({
      body: { metadata: { name: candidate, labels: { "kubecrew.io/test": "true" } } },
    });
    name = candidate;
    // Pods need the namespace's `default` ServiceAccount, which the serviceaccount controller creates.
    await eventually(() => handle.core.readNamespacedServiceAccount({ name: "default", namespace: candidate }), {
      message: `ServiceAccount default in ${candidate}`,
    });
  });
  afterAll(async () => {
    if (name) await handle.core.deleteNamespace({ name }).catch(() => undefined);
  });
  return handle;
}

/** Polls `check` until it returns a value other than undefined/false (or stops throwing); the last error on timeout. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<T> {
  const { timeoutMs = 60_000, intervalMs = 200, message = "condition" } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? `: ${lastError.message}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${message}${cause}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Waits for the Job's Complete or Failed condition to be True and returns the Job. */
export function waitForJobCondition(
  ns: TestNamespace,
  job: string,
  type: "Complete" | "Failed",
  timeoutMs = 90_000,
): Promise<V1Job> {
  return eventually(
    async () => {
      const current = await ns.batch.readNamespacedJob({ name: job, namespace: ns.name });
      return current.status?.conditions?.some((c) => c.type === type && c.status === "True") ? current : undefined;
    },
    { timeoutMs, intervalMs: 250, message: `Job ${ns.name}/${job} to be ${type}` },
  );
}
