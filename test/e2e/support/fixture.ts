import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { MemoryTokenStore } from "../../../api/auth/memory-token-store.ts";
import { createKubernetesBackend, type KubernetesBackend } from "../../../api/kubernetes-backend.ts";
import { createKubernetesFlows } from "../../../api/kubernetes-flows.ts";
import { startApi } from "../../../api/server.ts";
import { silentLogger } from "../../../core/logger.ts";
import { installedSystem, mintOrgToken } from "./installed.ts";
import { kubectl } from "./kubectl.ts";
import { clusterPolicy } from "../../../core/outbound/policy.ts";
import { freePort } from "../../support/ports.ts";

/** JSON from the API and from kubectl, which the tests assert on field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Loose = any;

export const repo = join(import.meta.dirname, "..", "..", "..");
export const nodeBinary = join(repo, "node_modules", ".bin", "node");
export const ORG_TOKEN = "kco_e2e-org-token-00000000000000000000";
/** The runner's service account: the one this fixture creates, or the installed chart's (E2E_RUNNER_SERVICE_ACCOUNT). */
export const RUNNER_SA = installedSystem?.runnerServiceAccount ?? "kubecrew-runner";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ""}`);
    await sleep(everyMs);
  }
}

export { freePort };

/** The runner's service account, allowed to create CrewTaskResults and nothing else (what the chart installs). */
export function runnerRbacYaml(namespace: string): string {
  return `apiVersion: v1
kind: ServiceAccount
metadata: { name: ${RUNNER_SA}, namespace: ${namespace} }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: ${RUNNER_SA}, namespace: ${namespace} }
rules:
  - apiGroups: [kubecrew.io]
    resources: [crewtaskresults]
    verbs: [create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: ${RUNNER_SA}, namespace: ${namespace} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: ${RUNNER_SA} }
subjects:
  - { kind: ServiceAccount, name: ${RUNNER_SA}, namespace: ${namespace} }
`;
}

/** The admission policy that keeps each task pod to the results of its own task (cluster-wide, applied once). */
export const RUNNER_RESULTS_POLICY = join(repo, "controller/manifests/runner-results-policy.yaml");
let policyApplied = false;

/** A namespace of its own for one test file, with the runner's service account and role. */
export async function createNamespace(kubeconfig: string, prefix: string): Promise<string> {
  const namespace = `e2e-${prefix}-${Math.random().toString(36).slice(2, 7)}`;
  if (!policyApplied) {
    await kubectl(kubeconfig, ["apply", "-f", RUNNER_RESULTS_POLICY]);
    policyApplied = true;
  }
  await kubectl(kubeconfig, ["create", "namespace", namespace]);
  await kubectl(kubeconfig, ["apply", "-f", "-"], runnerRbacYaml(namespace));
  return namespace;
}

export async function deleteNamespace(kubeconfig: string, namespace: string): Promise<void> {
  await kubectl(kubeconfig, ["delete", "namespace", namespace, "--wait=false", "--ignore-not-found"]);
}

/** Where a test file's crews go: a namespace of its own, or against an installed system the release namespace its
 * controller watches (the runner's account is the chart's there; the results policy is applied as in a fresh one). */
export async function crewNamespace(kubeconfig: string, prefix: string): Promise<string> {
  if (!installedSystem) return createNamespace(kubeconfig, prefix);
  if (!policyApplied) {
    await kubectl(kubeconfig, ["apply", "-f", RUNNER_RESULTS_POLICY]);
    policyApplied = true;
  }
  return installedSystem.namespace;
}

/** Deletes what crewNamespace created (never the installed release's namespace). */
export async function releaseCrewNamespace(kubeconfig: string, namespace: string): Promise<void> {
  if (namespace !== installedSystem?.namespace) await deleteNamespace(kubeconfig, namespace);
}

export interface CrewOptions {
  tasks?: number;
  retries?: number;
  taskTimeout?: number;
  executionTimeout?: number;
  annotations?: Record<string, string>;
  serviceAccount?: string;
}

/** A crew whose agent uses the mock provider with `model` (e.g. "fail", "sleep-2000", "size-204800"). */
export function crewYaml(name: string, model: string, options: CrewOptions = {}): string {
  const tasks = Array.from({ length: options.tasks ?? 3 }, (_, i) => i + 1);
  const annotations = options.annotations ? `\n  annotations: ${JSON.stringify(options.annotations)}` : "";
  return `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata:
  name: ${name}${annotations}
spec:
  inputs: [{ name: topic }]
  llm: { provider: mock, model: "${model}" }
  agents:
    - { name: writer, role: "{topic} Writer", goal: "Write about {topic}", backstory: "Writes well." }
  tasks:
${tasks.map((i) => `    - { name: step${i}, agent: writer, description: "Step ${i} on {topic}", expectedOutput: "Text ${i}" }`).join("\n")}
  runner:
    retries: ${options.retries ?? 0}
    taskTimeoutSeconds: ${options.taskTimeout ?? 60}
    executionTimeoutSeconds: ${options.executionTimeout ?? 600}${options.serviceAccount ? `\n    serviceAccountName: ${options.serviceAccount}` : ""}
`;
}

export async function applyCrew(kubeconfig: string, namespace: string, yaml: string): Promise<void> {
  await kubectl(kubeconfig, ["apply", "-n", namespace, "-f", "-"], yaml);
}

export interface ControllerProcess {
  child: ChildProcess;
  url: string;
  logFile: string;
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): Promise<number | null>;
  metric(name: string): Promise<number>;
}

/** `kubecrew controller` as a child process (so a test can SIGKILL it), watching one namespace; its log goes to
 * <tmp>/kubecrew-e2e-logs/<namespace>-<identity>-<time>.log. */
export async function startControllerProcess(
  kubeconfig: string,
  namespace: string,
  options: {
    identity?: string;
    env?: Record<string, string>;
    waitForLeader?: boolean;
    /** The CLI's entry point: cli/main.ts unless given (benchmarks run the compiled one, as the image does). */
    cli?: string;
  } = {},
): Promise<ControllerProcess> {
  const port = await freePort();
  const logDir = join(tmpdir(), "kubecrew-e2e-logs");
  mkdirSync(logDir, { recursive: true });
  const identity = options.identity ?? `controller-${namespace}`;
  const logFile = join(logDir, `${namespace}-${identity}-${Date.now()}.log`);
  const out = createWriteStream(logFile);
  const child = spawn(nodeBinary, [options.cli ?? join(repo, "cli/main.ts"), "controller"], {
    cwd: repo,
    env: {
      ...process.env,
      KUBECONFIG: kubeconfig,
      KUBECREW_NAMESPACE: namespace,
      KUBECREW_HEALTH_HOST: "127.0.0.1",
      KUBECREW_HEALTH_PORT: String(port),
      KUBECREW_CONTROLLER_ID: identity,
      KUBECREW_LEADER_ELECTION_NAMESPACE: namespace,
      KUBECREW_LEASE_DURATION_SECONDS: "4",
      KUBECREW_RENEW_DEADLINE_SECONDS: "3",
      KUBECREW_RETRY_PERIOD_SECONDS: "1",
      KUBECREW_RUNNER_SERVICE_ACCOUNT: RUNNER_SA,
      KUBECREW_WEBHOOK_INITIAL_DELAY_MS: "200",
      KUBECREW_OUTBOUND_ALLOW: "127.0.0.1",
      LOG_LEVEL: "debug",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const metric = async (name: string) => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(name + " ") || l.startsWith(name + "{"));
    return line ? Number(line.split(" ").at(-1)) : NaN;
  };
  const controller: ControllerProcess = {
    child,
    url,
    logFile,
    exited,
    metric,
    kill: async (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  await waitFor(`controller ${identity} healthy`, async () => (await fetch(`${url}/readyz`)).ok, 30_000);
  if (options.waitForLeader !== false)
    await waitFor(
      `controller ${identity} leading`,
      async () => (await metric("kubecrew_controller_leader")) === 1,
      30_000,
    );
  return controller;
}

export interface ClusterApi {
  url: string;
  /** The in-process API's backend (absent against an installed system: reading it throws). */
  backend: KubernetesBackend;
  /** The subject of the org token `call` sends (executions record it as requestedBy). */
  subject: string;
  stop(): Promise<void>;
  /** fetch against the API with the org token. */
  call(path: string, init?: { method?: string; body?: unknown }): Promise<{ status: number; body: Loose }>;
}

/** fetch against `url` with a bearer token, JSON in and out. */
function caller(url: string, token: string): ClusterApi["call"] {
  return async (path, init = {}) => {
    const res = await fetch(url + path, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: {
        Authorization: `Bearer ${token}`,
        ...(init.body !== undefined ? { "Content-Type": "application/json" } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

/** The crew API in cluster mode, in this process: the Kubernetes backend over informer caches. Against an installed
 * system (E2E_API_URL), the installed API instead, with an org token minted through its admin API. */
export async function startClusterApi(
  kubeconfig: string,
  namespace: string,
  defaultCrew?: string,
): Promise<ClusterApi> {
  if (installedSystem) {
    const { token, subject } = await mintOrgToken(installedSystem);
    return {
      url: installedSystem.apiUrl,
      get backend(): KubernetesBackend {
        throw new Error("no in-process API backend against an installed system");
      },
      subject,
      stop: async () => {},
      call: caller(installedSystem.apiUrl, token),
    };
  }
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const log = silentLogger();
  const backend = await createKubernetesBackend({ kubeConfig: kc, namespace, log });
  const flows = await createKubernetesFlows({ kubeConfig: kc, namespace, log, results: backend.caches.results });
  const tokens = new MemoryTokenStore();
  tokens.add(ORG_TOKEN, { kind: "org", crews: "*", subject: "e2e-org" });
  const server = await startApi({
    backend,
    flows,
    tokens,
    log,
    port: 0,
    host: "127.0.0.1",
    bodyLimitBytes: 10 * 1024 * 1024,
    // The tests' webhook receivers listen on loopback, which a cluster's policy refuses: open exactly that address.
    outboundPolicy: { ...clusterPolicy, allow: ["127.0.0.1"] },
    ...(defaultCrew ? { defaultCrew } : {}),
  });
  return {
    url: server.url,
    backend,
    subject: "e2e-org",
    stop: async () => {
      await server.stop();
      await backend.stop();
      await flows.close();
    },
    call: caller(server.url, ORG_TOKEN),
  };
}

/** Kicks off `crew` with a topic; answers the kickoff_id. */
export async function kickoff(api: ClusterApi, crew: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await api.call(`/crews/${crew}/kickoff`, { body: { inputs: { topic: "tides" }, ...extra } });
  if (res.status !== 200) throw new Error(`kickoff ${crew}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.kickoff_id as string;
}

export async function status(api: ClusterApi, crew: string, id: string): Promise<Loose> {
  const res = await api.call(`/crews/${crew}/status/${id}`);
  if (res.status !== 200) throw new Error(`status ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Polls /status until it leaves "running"; answers the final body. */
export async function finalStatus(api: ClusterApi, crew: string, id: string, timeoutMs = 90_000): Promise<Loose> {
  return waitFor(
    `execution ${id} finished`,
    async () => {
      const body = await status(api, crew, id);
      return body.status === "running" ? undefined : body;
    },
    timeoutMs,
    250,
  );
}

export async function jobsOf(kubeconfig: string, namespace: string, execution?: string): Promise<Loose[]> {
  const selector = execution ? `kubecrew.io/execution=${execution}` : "kubecrew.io/execution";
  return JSON.parse(await kubectl(kubeconfig, ["get", "jobs", "-n", namespace, "-l", selector, "-o", "json"])).items;
}

/** Names of an execution's ConfigMaps (names only: a large context's ConfigMaps hold megabytes). */
export async function configMapsOf(kubeconfig: string, namespace: string, execution: string): Promise<string[]> {
  const selector = `kubecrew.io/execution=${execution}`;
  const out = await kubectl(kubeconfig, ["get", "configmaps", "-n", namespace, "-l", selector, "-o", "name"]);
  return out
    .split("\n")
    .filter(Boolean)
    .map((line) => line.replace(/^configmap\//, ""));
}

export async function resultsOf(kubeconfig: string, namespace: string, execution: string): Promise<Loose[]> {
  const selector = `kubecrew.io/execution=${execution}`;
  return JSON.parse(
    await kubectl(kubeconfig, ["get", "crewtaskresults", "-n", namespace, "-l", selector, "-o", "json"]),
  ).items;
}
