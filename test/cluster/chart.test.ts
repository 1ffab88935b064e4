/**
 * The chart against the run's real control plane (test/support/cluster-global-setup.ts):
 * - every manifest it renders, under the main value combinations, passes a server-side dry run;
 * - `helm install` creates what it should, and the generated Secret survives `helm upgrade` and uninstall;
 * - each service account can do what its component needs and no more (`kubectl auth can-i` as that account);
 * - installed with its defaults but for ports and Redis, the chart's controller and integrations service run on the
 *   local node (which runs pods' commands as processes of this repository's code): the example crew's execution
 *   completes through Jobs under the runner's service account.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { V1Ingress } from "@kubernetes/client-node";
import {
  chartDir,
  helm,
  parseManifests,
  toolsDir,
  withValuesFile,
  template,
  type CommandResult,
} from "../chart/support/helm.ts";
import { startIngressNginx } from "../chart/support/ingress-nginx.ts";
import { eventually } from "../support/cluster.ts";
import { freePort, startRedis, type RedisServer } from "../support/redis.ts";

const kubeconfig = inject("kubeconfig");
const env = { KUBECONFIG: kubeconfig };

function kubectl(args: string[], input?: string): CommandResult {
  const run = spawnSync(join(toolsDir(), "kubectl"), args, {
    encoding: "utf8",
    input,
    env: { ...process.env, ...env },
  });
  return { status: run.status ?? 1, stdout: run.stdout, stderr: run.stderr };
}

function kubectlJson<T>(args: string[]): T {
  const result = kubectl([...args, "-o", "json"]);
  if (result.status !== 0) throw new Error(`kubectl ${args.join(" ")}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

function mustSucceed(what: string, result: CommandResult): string {
  if (result.status !== 0) throw new Error(`${what} failed (${result.status}): ${result.stderr}${result.stdout}`);
  return result.stdout;
}

function helmIn(namespace: string, args: string[], values: object = {}): CommandResult {
  return withValuesFile(values, (file) => helm([...args, "--namespace", namespace, "--values", file], { env }));
}

function createNamespace(prefix: string): string {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  mustSucceed("kubectl create namespace", kubectl(["create", "namespace", name]));
  return name;
}

function deleteNamespace(name: string): void {
  kubectl(["delete", "namespace", name, "--wait=false", "--ignore-not-found"]);
}

interface SecretObject {
  data: Record<string, string>;
  metadata: { annotations?: Record<string, string> };
}
const decoded = (secret: SecretObject) =>
  Object.fromEntries(Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));

const namespaces: string[] = [];
afterAll(() => {
  for (const name of namespaces) deleteNamespace(name);
});

describe("server-side dry run", () => {
  let namespace: string;
  beforeAll(() => {
    namespace = createNamespace("chart-dry-run");
    namespaces.push(namespace);
  });

  it.each([
    ["the defaults", {}],
    [
      "a shared host with TLS",
      { ingress: { enabled: true, className: "nginx", host: "crews.example.com", tls: { enabled: true } } },
    ],
    ["a dedicated integrations host", { ingress: { enabled: true, integrations: { host: "oauth.example.com" } } }],
    [
      "external Redis and an existing Secret",
      { redis: { enabled: false }, externalRedis: { url: "redis://redis:6379" }, secrets: { existingSecret: "keys" } },
    ],
    ["an HA controller", { controller: { replicas: 2 } }],
  ])("accepts every object rendered with %s", (_name, values) => {
    const rendered = template({ namespace, values });
    mustSucceed("helm template", rendered);
    const kinds = [...rendered.stdout.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1]);
    expect(kinds).toContain("Deployment");
    const applied = kubectl(
      [
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager",
        "chart-test",
        "--dry-run=server",
        "-n",
        namespace,
        "-f",
        "-",
      ],
      rendered.stdout,
    );
    expect(applied.stderr).toBe("");
    expect(applied.status).toBe(0);
    // One line per object, each accepted by the apiserver.
    expect(applied.stdout.trim().split("\n")).toHaveLength(kinds.length);
    expect(applied.stdout).not.toMatch(/error/i);
  });
});

describe("helm install with the chart's Redis, then upgrade, uninstall and reinstall", () => {
  let namespace: string;
  // No component pods (replicas 0): the defaults would bind their fixed ports on the machine the local node runs on
  // (and Redis gets a free one, should the cluster run StatefulSets).
  let values: object;

  beforeAll(async () => {
    namespace = createNamespace("chart-install");
    namespaces.push(namespace);
    values = {
      crds: { enabled: false },
      api: { replicas: 0 },
      controller: { replicas: 0 },
      integrations: { replicas: 0 },
      redis: { port: await freePort() },
    };
  });

  it("installs, and prints the next commands: how to get a token and kick off the example crew", () => {
    const output = mustSucceed("helm install", helmIn(namespace, ["install", "kubecrew", chartDir], values));
    expect(output).toContain("STATUS: deployed");
    expect(output).toContain(`kubectl -n ${namespace} get secret kubecrew -o jsonpath='{.data.admin-key}' | base64 -d`);
    expect(output).toContain(`curl -s -X POST "$KUBECREW_URL/admin/tokens" -H "X-Admin-Key: $ADMIN_KEY"`);
    expect(output).toContain(`curl -s -X POST "$KUBECREW_URL/crews/research/kickoff"`);
    expect(output).toContain(`kubectl -n ${namespace} port-forward service/kubecrew-api 8080:80`);
  });

  it("creates the Deployments, the Redis StatefulSet, Services, ServiceAccounts, Roles and the example Crew", () => {
    const names = (kind: string) =>
      kubectlJson<{ items: { metadata: { name: string } }[] }>([
        "get",
        kind,
        "-n",
        namespace,
        "-l",
        "app.kubernetes.io/instance=kubecrew",
      ])
        .items.map((i) => i.metadata.name)
        .sort();
    expect(names("deployments")).toEqual(["kubecrew-api", "kubecrew-controller", "kubecrew-integrations"]);
    expect(names("statefulsets")).toEqual(["kubecrew-redis"]);
    expect(names("services")).toEqual([
      "kubecrew-api",
      "kubecrew-api-metrics",
      "kubecrew-controller-metrics",
      "kubecrew-integrations",
      "kubecrew-redis",
      "kubecrew-redis-headless",
    ]);
    expect(names("serviceaccounts")).toEqual([
      "kubecrew-api",
      "kubecrew-controller",
      "kubecrew-integrations",
      "kubecrew-redis",
      "kubecrew-runner",
    ]);
    expect(names("roles")).toEqual(["kubecrew-api", "kubecrew-controller", "kubecrew-runner"]);
    expect(names("rolebindings")).toEqual(["kubecrew-api", "kubecrew-controller", "kubecrew-runner"]);
    expect(names("poddisruptionbudgets")).toEqual(["kubecrew-api", "kubecrew-controller", "kubecrew-integrations"]);
    expect(names("crews")).toEqual(["research"]);
  });

  it("generates the Secret with a 64-hex encryption key", () => {
    const secret = decoded(kubectlJson<SecretObject>(["get", "secret", "kubecrew", "-n", namespace]));
    expect(secret["oauth-db-encryption-key"]).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(secret).sort()).toEqual(
      [
        "admin-key",
        "apps-signing-key",
        "console-session-secret",
        "oauth-cookie-secret",
        "oauth-db-encryption-key",
        "oauth-internal-api-key",
        "redis-password",
      ].sort(),
    );
  });

  it("keeps every generated key on helm upgrade", () => {
    const before = kubectlJson<SecretObject>(["get", "secret", "kubecrew", "-n", namespace]).data;
    const output = mustSucceed(
      "helm upgrade",
      helmIn(namespace, ["upgrade", "kubecrew", chartDir], { ...values, logLevel: "debug" }),
    );
    expect(output).toContain("REVISION: 2");
    expect(kubectlJson<SecretObject>(["get", "secret", "kubecrew", "-n", namespace]).data).toEqual(before);
    const api = kubectlJson<{
      spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
    }>(["get", "deployment", "kubecrew-api", "-n", namespace]);
    expect(api.spec.template.spec.containers[0]!.env.find((e) => e.name === "LOG_LEVEL")?.value).toBe("debug");
  });

  it("keeps the Secret after uninstall, and a reinstall under the same name reuses it", () => {
    const before = kubectlJson<SecretObject>(["get", "secret", "kubecrew", "-n", namespace]).data;
    mustSucceed("helm uninstall", helm(["uninstall", "kubecrew", "--namespace", namespace, "--wait"], { env }));
    expect(kubectl(["get", "deployment", "kubecrew-api", "-n", namespace]).status).not.toBe(0);
    expect(kubectlJson<SecretObject>(["get", "secret", "kubecrew", "-n", namespace]).data).toEqual(before);
    mustSucceed("helm install again", helmIn(namespace, ["install", "kubecrew", chartDir], values));
    expect(kubectlJson<SecretObject>(["get", "secret", "kubecrew", "-n", namespace]).data).toEqual(before);
  });
});

describe("the installed chart on the local node", () => {
  let namespace: string;
  let redis: RedisServer;
  let ports: { api: number; apiMetrics: number; health: number; integrations: number };
  let notes: string;
  let values: object;
  const account = (name: string) => `system:serviceaccount:${namespace}:kubecrew-${name}`;
  /** `kubectl auth can-i` as one of the chart's service accounts; `resource` may be `<resource>/<subresource>`. */
  const can = (as: string, verb: string, resource: string, ns = namespace) => {
    const [type, subresource] = resource.split("/");
    const sub = subresource ? ["--subresource", subresource] : [];
    return kubectl(["auth", "can-i", verb, type!, ...sub, "--as", account(as), "-n", ns]).stdout.trim();
  };

  beforeAll(async () => {
    namespace = createNamespace("chart-run");
    namespaces.push(namespace);
    redis = await startRedis();
    ports = {
      api: await freePort(),
      apiMetrics: await freePort(),
      health: await freePort(),
      integrations: await freePort(),
    };
    values = {
      redis: { enabled: false },
      externalRedis: { url: redis.url },
      api: { port: ports.api, metrics: { port: ports.apiMetrics } },
      controller: { healthPort: ports.health },
      integrations: { port: ports.integrations },
    };
    // The run's cluster has the CRDs of crds/ already (applied by the global setup); the chart adopts them.
    notes = mustSucceed(
      "helm install",
      helmIn(namespace, ["install", "kubecrew", chartDir, "--take-ownership"], values),
    );
  });

  afterAll(async () => {
    if (namespace) helm(["uninstall", "kubecrew", "--namespace", namespace, "--wait"], { env });
    await redis?.stop();
  });

  it("manages the CRDs, with the keep policy", () => {
    for (const crd of ["crews.kubecrew.io", "crewexecutions.kubecrew.io", "crewtaskresults.kubecrew.io"]) {
      const object = kubectlJson<{ metadata: { annotations: Record<string, string> } }>(["get", "crd", crd]);
      expect(object.metadata.annotations).toMatchObject({
        "helm.sh/resource-policy": "keep",
        "meta.helm.sh/release-name": "kubecrew",
        "meta.helm.sh/release-namespace": namespace,
      });
    }
  });

  it("the API may read crews and create and stop executions, and cannot read Secrets", () => {
    expect(can("api", "get", "secrets")).toBe("no");
    expect(can("api", "list", "secrets")).toBe("no");
    expect(can("api", "get", "crews.kubecrew.io")).toBe("yes");
    expect(can("api", "create", "crewexecutions.kubecrew.io")).toBe("yes");
    expect(can("api", "patch", "crewexecutions.kubecrew.io")).toBe("yes");
    expect(can("api", "delete", "crewexecutions.kubecrew.io")).toBe("no");
    expect(can("api", "create", "crewtaskresults.kubecrew.io")).toBe("no");
    expect(can("api", "create", "jobs.batch")).toBe("no");
    expect(can("api", "get", "crews.kubecrew.io", "default")).toBe("no");
  });

  it("the runner can only create and patch CrewTaskResults", () => {
    expect(can("runner", "create", "crewtaskresults.kubecrew.io")).toBe("yes");
    for (const [verb, resource] of [
      ["get", "crewtaskresults.kubecrew.io"],
      ["list", "crewtaskresults.kubecrew.io"],
      ["update", "crewtaskresults.kubecrew.io"],
      ["get", "secrets"],
      ["list", "secrets"],
      ["create", "pods"],
      ["create", "jobs.batch"],
      ["create", "configmaps"],
      ["get", "crews.kubecrew.io"],
      ["update", "crewexecutions.kubecrew.io"],
      ["patch", "crewexecutions.kubecrew.io"],
      ["patch", "crewexecutions.kubecrew.io/status"],
    ]) {
      expect(can("runner", verb!, resource!), `${verb} ${resource}`).toBe("no");
    }
    expect(can("runner", "create", "crewtaskresults.kubecrew.io", "default")).toBe("no");
    // Everything it may do on resources, beyond what every authenticated identity may (the self reviews).
    const list = mustSucceed(
      "can-i --list",
      kubectl(["auth", "can-i", "--list", "--as", account("runner"), "-n", namespace]),
    );
    const resourceRules = list
      .split("\n")
      .slice(1)
      .filter((line) => /^\S/.test(line) && !/^self\w+reviews\./.test(line))
      .map((line) => line.trim().split(/\s+/).join(" "));
    expect(resourceRules).toEqual(["crewtaskresults.kubecrew.io [] [] [create patch]"]);
  });

  it("the controller runs Jobs, gets, creates and deletes (never lists) Secrets; the integrations service has no API access", () => {
    expect(can("controller", "create", "jobs.batch")).toBe("yes");
    expect(can("controller", "delete", "configmaps")).toBe("yes");
    expect(can("controller", "patch", "crewexecutions.kubecrew.io/status")).toBe("yes");
    expect(can("controller", "patch", "crews.kubecrew.io/status")).toBe("yes");
    expect(can("controller", "get", "secrets")).toBe("yes");
    // Each execution's app-credential Secret: created with its first task, deleted when it finishes.
    expect(can("controller", "create", "secrets")).toBe("yes");
    expect(can("controller", "delete", "secrets")).toBe("yes");
    expect(can("controller", "list", "secrets")).toBe("no");
    expect(can("controller", "watch", "secrets")).toBe("no");
    expect(can("controller", "create", "pods")).toBe("no");
    const lease = (name: string) =>
      kubectl([
        "auth",
        "can-i",
        "update",
        `leases.coordination.k8s.io/${name}`,
        "--as",
        account("controller"),
        "-n",
        namespace,
      ]).stdout.trim();
    expect(lease("kubecrew-controller")).toBe("yes");
    expect(lease("someone-else")).toBe("no");
    expect(can("integrations", "get", "secrets")).toBe("no");
    expect(can("integrations", "get", "crews.kubecrew.io")).toBe("no");
  });

  it("the controller takes the lease and marks the example crew Ready", async () => {
    await eventually(
      () => {
        const lease = kubectl([
          "get",
          "lease",
          "kubecrew-controller",
          "-n",
          namespace,
          "-o",
          "jsonpath={.spec.holderIdentity}",
        ]);
        return lease.status === 0 && lease.stdout.startsWith("kubecrew-controller-");
      },
      { timeoutMs: 60_000, message: "the controller's lease" },
    );
    await eventually(
      () =>
        kubectl([
          "get",
          "crew",
          "research",
          "-n",
          namespace,
          "-o",
          `jsonpath={.status.conditions[?(@.type=="Ready")].status}`,
        ]).stdout === "True",
      { timeoutMs: 60_000, message: "crew research Ready" },
    );
  });

  it("the integrations service answers on its port with Redis reachable", async () => {
    const body = await eventually(
      async () => {
        const response = await fetch(`http://127.0.0.1:${ports.integrations}/ready`);
        return response.status === 200 ? ((await response.json()) as unknown) : undefined;
      },
      { timeoutMs: 60_000, message: "integrations /ready" },
    );
    expect(body).toEqual({ status: "ready", store: "redis", redis: "reachable" });
  });

  it("the API serves, and the commands NOTES prints get a token that kicks off the example crew to completion", async () => {
    const url = `http://127.0.0.1:${ports.api}`;
    await eventually(async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 60_000, message: "API /readyz" });
    // Step 3 of NOTES as printed: the admin key from the Secret, a token from the admin API.
    const lines = notes.split("\n");
    const start = lines.findIndex((l) => l.trim().startsWith("export ADMIN_KEY="));
    const script = [`export KUBECREW_URL=${url}`, ...lines.slice(start, start + 3), `printf %s "$TOKEN"`].join("\n");
    const run = spawnSync("bash", ["-euo", "pipefail", "-c", script], {
      encoding: "utf8",
      env: { ...process.env, ...env, PATH: `${toolsDir()}:${process.env.PATH}` },
    });
    expect(run.stderr).toBe("");
    const token = run.stdout;
    expect(token.length).toBeGreaterThan(20);

    const call = async (path: string, body?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: {
          Authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    expect(await call("/crews/research/inputs")).toEqual({ status: 200, body: { inputs: ["topic"] } });
    const kickoff = await call("/crews/research/kickoff", { inputs: { topic: "Helm" } });
    expect(kickoff.status).toBe(200);
    const id = kickoff.body.kickoff_id as string;
    const done = await eventually(
      async () => {
        const status = await call(`/crews/research/status/${id}`);
        if (status.body.status === "error") throw new Error(`the execution failed: ${JSON.stringify(status.body)}`);
        return status.body.status === "completed" ? status.body : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, message: `execution ${id} completed through the API` },
    );
    expect((done.result as { tasks: unknown[] }).tasks).toHaveLength(3);
    expect(done.state).toBe("SUCCESS");
    // The root paths serve the default crew: the example.
    expect(await call("/inputs")).toEqual({ status: 200, body: { inputs: ["topic"] } });
    // The API's metrics on the chart's metrics port count that kickoff.
    const metrics = await (await fetch(`http://127.0.0.1:${ports.apiMetrics}/metrics`)).text();
    expect(metrics).toContain('kubecrew_api_kickoffs_total{crew="research"} 1\n');
  });

  it("behind an nginx configured from the chart's Ingress as ingress-nginx would: API at /, integrations under /oauthsvc", async () => {
    const rendered = template({ namespace, values: { ...values, ingress: { enabled: true, host: "localhost" } } });
    const ingresses = parseManifests(mustSucceed("helm template", rendered)).filter(
      (m) => m.kind === "Ingress",
    ) as unknown as V1Ingress[];
    expect(ingresses).toHaveLength(2);
    const nginx = await startIngressNginx(
      ingresses,
      { "kubecrew-api": ports.api, "kubecrew-integrations": ports.integrations },
      await freePort(),
    );
    try {
      await eventually(async () => (await fetch(`${nginx.url}/readyz`)).ok, { message: "the API through nginx" });
      const get = async (path: string) => {
        const response = await fetch(`${nginx.url}${path}`, { headers: { Accept: "application/json" } });
        return { status: response.status, text: await response.text() };
      };
      expect(await get("/inputs")).toMatchObject({ status: 401, text: expect.stringContaining("Unauthorized") });
      // The integrations service, its /oauthsvc prefix stripped.
      await eventually(async () => (await get("/oauthsvc/ready")).status === 200, { message: "integrations /ready" });
      expect(JSON.parse((await get("/oauthsvc/health")).text)).toEqual({
        status: "ok",
        store: "redis",
        redis: "reachable",
      });
      // A provider callback reaches the integrations service (no provider is configured: its 404), not the API,
      // which answers the same path with its "route not configured" 502 when reached directly.
      const callback = await get("/oauthsvc/v1/auth/google/callback?code=x&state=y");
      expect(callback.status).toBe(404);
      expect(callback.text).not.toContain("Integrations route not configured");
      const direct = await fetch(`http://127.0.0.1:${ports.api}/oauthsvc/v1/auth/google/callback`, {
        headers: { Accept: "application/json" },
      });
      expect(direct.status).toBe(502);
      expect(await direct.text()).toContain("Integrations route not configured");
      // A 5 MB body passes the proxy (proxy-body-size 10m) and is answered by the API, not refused by nginx.
      const big = await fetch(`${nginx.url}/kickoff`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ inputs: { topic: "x".repeat(5 * 1024 * 1024) } }),
      });
      expect(big.headers.get("content-type")).toContain("application/json");
      expect(big.status).not.toBe(502);
      expect(await big.text()).not.toContain("<html>");
    } finally {
      await nginx.stop();
    }
  });

  it("an execution of the example crew completes, each task a Job under the runner's service account", async () => {
    const id = "0f5a3c1e-7b2d-4c8e-9a6f-1d2e3f4a5b6c";
    mustSucceed(
      "create the CrewExecution",
      kubectl(
        ["create", "-n", namespace, "-f", "-"],
        JSON.stringify({
          apiVersion: "kubecrew.io/v1alpha1",
          kind: "CrewExecution",
          metadata: { name: id },
          spec: { crewRef: { name: "research" }, inputs: { topic: "Helm charts" } },
        }),
      ),
    );
    await eventually(
      () => {
        const phase = kubectl(["get", "crewexecution", id, "-n", namespace, "-o", "jsonpath={.status.phase}"]).stdout;
        if (phase === "Failed") throw new Error("the execution failed");
        return phase === "Succeeded";
      },
      { timeoutMs: 120_000, intervalMs: 500, message: `execution ${id} to succeed` },
    );
    const results = kubectlJson<{ items: { metadata: { name: string } }[] }>([
      "get",
      "crewtaskresults",
      "-n",
      namespace,
      "-l",
      `kubecrew.io/execution=${id}`,
    ]);
    // Per task: the success, and its steps patched in while it ran (`<pod>-steps`) through the chart's Role and policy.
    expect(results.items).toHaveLength(6);
    expect(results.items.filter((r) => r.metadata.name.endsWith("-steps"))).toHaveLength(3);
    const pods = kubectlJson<{ items: { spec: { serviceAccountName: string } }[] }>([
      "get",
      "pods",
      "-n",
      namespace,
      "-l",
      `kubecrew.io/execution=${id}`,
    ]);
    expect(pods.items.length).toBeGreaterThanOrEqual(3);
    expect(new Set(pods.items.map((p) => p.spec.serviceAccountName))).toEqual(new Set(["kubecrew-runner"]));
  });

  // The controller's pod-bound token was matched by the runner's results policy, which refused it the results of a
  // flow's methods: on kind no flow method ever ended (issue 33).
  it("a flow run completes: the controller, in its pod, records each method's result past the runner's policy", async () => {
    const flow = {
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "Flow",
      metadata: { name: "tally" },
      spec: {
        schema: "crewai.flow/v1",
        name: "Tally",
        state: { type: "dict", default: { word: "tide" } },
        methods: {
          double: { start: true, do: { call: "expression", expr: "state.word + state.word" } },
          report: { listen: "double", do: { call: "expression", expr: "'total: ' + outputs.double" } },
        },
      },
    };
    mustSucceed("apply the Flow", kubectl(["apply", "-n", namespace, "-f", "-"], JSON.stringify(flow)));
    const ready = `jsonpath={.status.conditions[?(@.type=="Ready")].status}`;
    await eventually(() => kubectl(["get", "flow", "tally", "-n", namespace, "-o", ready]).stdout === "True", {
      timeoutMs: 60_000,
      message: "flow tally Ready",
    });
    const id = "5b1e2a9c-3d4f-4e6a-8b7c-9d0e1f2a3b4c";
    const run = { flowRef: { name: "tally" }, inputs: { word: "pool" } };
    mustSucceed(
      "create the FlowExecution",
      kubectl(
        ["create", "-n", namespace, "-f", "-"],
        JSON.stringify({
          apiVersion: "kubecrew.io/v1alpha1",
          kind: "FlowExecution",
          metadata: { name: id },
          spec: run,
        }),
      ),
    );
    await eventually(
      () => kubectl(["get", "fe", id, "-n", namespace, "-o", "jsonpath={.status.phase}"]).stdout === "Succeeded",
      { timeoutMs: 60_000, intervalMs: 500, message: `flow run ${id} to succeed` },
    );
    const results = kubectlJson<{ items: { spec: { taskName: string; output: string } }[] }>([
      ...["get", "crewtaskresults", "-n", namespace, "-l", `kubecrew.io/execution=${id}`],
    ]);
    expect(results.items.map((r) => [r.spec.taskName, r.spec.output]).sort()).toEqual([
      ["double", "poolpool"],
      ["report", "total: poolpool"],
    ]);
  });
});
