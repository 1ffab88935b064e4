/**
 * The chart rendered by the pinned helm under the main value combinations, with assertions on the objects a user
 * gets: hardened pods, Secret references that resolve, least-privilege RBAC, the two Ingress layouts, external Redis,
 * an HA controller, and a schema that rejects what it does not know.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { V1Ingress, V1PolicyRule, V1PodSpec, V1Service, V1StatefulSetSpec } from "@kubernetes/client-node";
import {
  chartDir,
  container,
  envOf,
  envValue,
  find,
  helm,
  parseManifests,
  ofKind,
  podTemplate,
  render,
  repo,
  template,
  withValuesFile,
  type Manifest,
} from "./support/helm.ts";

const byDefault = render();
const workloads = (manifests: Manifest[]) =>
  manifests.filter((m) => m.kind === "Deployment" || m.kind === "StatefulSet");
const rulesOf = (manifests: Manifest[], role: string) => (find(manifests, "Role", role).rules ?? []) as V1PolicyRule[];
const secretData = (secret: Manifest) =>
  Object.fromEntries(
    Object.entries(secret.data as Record<string, string>).map(([k, v]) => [
      k,
      Buffer.from(v, "base64").toString("utf8"),
    ]),
  );
const ingressOf = (manifests: Manifest[], name: string) => find(manifests, "Ingress", name) as unknown as V1Ingress;

/** What `helm.sh/resource-policy: keep` and ingress-nginx read. */
const annotations = (m: { metadata?: { annotations?: Record<string, string> } }) => m.metadata?.annotations ?? {};

const sharedHost = render({
  values: { ingress: { enabled: true, className: "nginx", host: "crews.example.com", tls: { enabled: true } } },
});
const dedicatedHost = render({
  values: {
    ingress: {
      enabled: true,
      className: "nginx",
      host: "crews.example.com",
      integrations: { host: "oauth.example.com" },
    },
  },
});
const externalRedis = render({
  values: { redis: { enabled: false }, externalRedis: { url: "rediss://:pw@redis.example.com:6380/2" } },
});
const haController = render({ values: { controller: { replicas: 2, leaderElection: { enabled: true } } } });
const existingSecret = render({ values: { secrets: { existingSecret: "my-keys" } } });

describe("helm lint", () => {
  it.each([
    ["the defaults", {}],
    ["a shared host", { ingress: { enabled: true, host: "crews.example.com" } }],
    ["a dedicated integrations host", { ingress: { enabled: true, integrations: { host: "oauth.example.com" } } }],
    ["external Redis", { redis: { enabled: false }, externalRedis: { url: "redis://redis:6379" } }],
    ["an HA controller", { controller: { replicas: 2 } }],
  ])("passes with %s", (_name, values) => {
    const result = withValuesFile(values, (file) => helm(["lint", "--strict", chartDir, "--values", file]));
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("1 chart(s) linted, 0 chart(s) failed");
    expect(result.status).toBe(0);
  });
});

describe("the default install", () => {
  it("holds the three components, Redis, their Services, the Secret, RBAC, the CRDs and the runner's results policy", () => {
    const names = byDefault.map((m) => `${m.kind}/${m.metadata.name}`).sort();
    expect(names).toEqual(
      [
        "CustomResourceDefinition/crewexecutions.kubecrew.io",
        "CustomResourceDefinition/crews.kubecrew.io",
        "CustomResourceDefinition/crewtaskresults.kubecrew.io",
        "CustomResourceDefinition/flowexecutions.kubecrew.io",
        "CustomResourceDefinition/flows.kubecrew.io",
        "Crew/research",
        "Deployment/kubecrew-api",
        "Deployment/kubecrew-controller",
        "Deployment/kubecrew-integrations",
        "PodDisruptionBudget/kubecrew-api",
        "PodDisruptionBudget/kubecrew-controller",
        "PodDisruptionBudget/kubecrew-integrations",
        "Role/kubecrew-api",
        "Role/kubecrew-controller",
        "Role/kubecrew-runner",
        "RoleBinding/kubecrew-api",
        "RoleBinding/kubecrew-controller",
        "RoleBinding/kubecrew-runner",
        "Secret/kubecrew",
        "Service/kubecrew-api",
        "Service/kubecrew-api-metrics",
        "Service/kubecrew-controller-metrics",
        "Service/kubecrew-integrations",
        "Service/kubecrew-redis",
        "Service/kubecrew-redis-headless",
        "ServiceAccount/kubecrew-api",
        "ServiceAccount/kubecrew-controller",
        "ServiceAccount/kubecrew-integrations",
        "ServiceAccount/kubecrew-redis",
        "ServiceAccount/kubecrew-runner",
        "StatefulSet/kubecrew-redis",
        "ValidatingAdmissionPolicy/kubecrew-runner-own-results-crews",
        "ValidatingAdmissionPolicyBinding/kubecrew-runner-own-results-crews",
      ].sort(),
    );
    const clusterScoped = ["CustomResourceDefinition", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"];
    for (const m of byDefault.filter((m) => !clusterScoped.includes(m.kind)))
      expect(m.metadata.namespace, m.kind).toBe("crews");
  });

  it("lets a task pod create only its own task's results: the controller's policy, bound to the release namespace", () => {
    const manifest = parseManifests(
      readFileSync(join(repo, "controller/manifests/runner-results-policy.yaml"), "utf8"),
    );
    const policy = find(byDefault, "ValidatingAdmissionPolicy", "kubecrew-runner-own-results-crews");
    const generic = find(manifest, "ValidatingAdmissionPolicy", "kubecrew-runner-own-results");
    // The same policy, but for the controller it leaves out: the release's own account (its pod's token is pod-bound).
    type PolicySpec = { matchConditions: { name: string; expression: string }[] };
    const { matchConditions, ...rest } = policy.spec as PolicySpec;
    const { matchConditions: genericConditions, ...genericRest } = generic.spec as PolicySpec;
    expect(rest).toEqual(genericRest);
    expect(matchConditions).toEqual([
      genericConditions[0],
      {
        name: "not-the-controller",
        expression: "request.userInfo.username != 'system:serviceaccount:crews:kubecrew-controller'",
      },
    ]);
    const binding = find(byDefault, "ValidatingAdmissionPolicyBinding", "kubecrew-runner-own-results-crews");
    expect(binding.spec).toEqual({
      policyName: "kubecrew-runner-own-results-crews",
      validationActions: ["Deny"],
      matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "crews" } } },
    });
    const without = render({ values: { controller: { runner: { ownResultsPolicy: false } } } });
    expect(ofKind(without, "ValidatingAdmissionPolicy")).toEqual([]);
  });

  it("runs each component as a subcommand of the kubecrew CLI in the chart's image", () => {
    for (const [deployment, subcommand] of [
      ["kubecrew-api", "api"],
      ["kubecrew-controller", "controller"],
      ["kubecrew-integrations", "integrations"],
    ]) {
      const c = container(find(byDefault, "Deployment", deployment!));
      expect(c.image).toBe("kubecrew:0.1.0");
      expect([...(c.command ?? []), ...(c.args ?? [])]).toEqual(["kubecrew", subcommand]);
    }
    const c = container(
      find(
        render({
          values: {
            image: { repository: "registry.example/kubecrew", tag: "1.2.3", digest: `sha256:${"a".repeat(64)}` },
          },
        }),
        "Deployment",
        "kubecrew-api",
      ),
    );
    expect(c.image).toBe(`registry.example/kubecrew:1.2.3@sha256:${"a".repeat(64)}`);
  });

  it("hardens every pod: non-root, read-only root filesystem, no capabilities, RuntimeDefault seccomp, no privilege escalation", () => {
    expect(workloads(byDefault)).toHaveLength(4);
    for (const workload of workloads(byDefault)) {
      const pod = podTemplate(workload).spec as V1PodSpec;
      expect(pod.securityContext, workload.metadata.name).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: "RuntimeDefault" },
      });
      for (const c of pod.containers) {
        expect(c.securityContext, `${workload.metadata.name}/${c.name}`).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          privileged: false,
          capabilities: { drop: ["ALL"] },
          seccompProfile: { type: "RuntimeDefault" },
        });
        expect(c.resources?.requests?.memory, c.name).toBeDefined();
        expect(c.resources?.limits?.memory, c.name).toBeDefined();
        expect(c.livenessProbe, c.name).toBeDefined();
        expect(c.readinessProbe, c.name).toBeDefined();
        // A read-only root needs a writable /tmp (Node's compile cache, temporary files).
        const tmp = c.volumeMounts?.find((v) => v.mountPath === "/tmp");
        expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir, `${c.name} /tmp`).toBeDefined();
      }
    }
  });

  it("runs kubecrew under the pod's pause process, so a SIGTERM while Node starts is not dropped", () => {
    const shared = Object.fromEntries(
      workloads(byDefault).map((w) => [w.metadata.name, (podTemplate(w).spec as V1PodSpec).shareProcessNamespace]),
    );
    expect(shared).toEqual({
      "kubecrew-api": true,
      "kubecrew-controller": true,
      "kubecrew-integrations": true,
      "kubecrew-redis": undefined, // redis-server handles SIGTERM from its first instruction
    });
  });

  it("mounts a service-account token only into the pods that call the Kubernetes API", () => {
    const automount = Object.fromEntries(
      workloads(byDefault).map((w) => [
        w.metadata.name,
        (podTemplate(w).spec as V1PodSpec).automountServiceAccountToken,
      ]),
    );
    expect(automount).toEqual({
      "kubecrew-api": true,
      "kubecrew-controller": true,
      "kubecrew-integrations": false,
      "kubecrew-redis": false,
    });
  });

  it("probes the health endpoints each component serves", () => {
    const probes = (name: string) => {
      const c = container(find(byDefault, "Deployment", name));
      return [c.livenessProbe?.httpGet?.path, c.readinessProbe?.httpGet?.path];
    };
    expect(probes("kubecrew-api")).toEqual(["/healthz", "/readyz"]);
    expect(probes("kubecrew-controller")).toEqual(["/healthz", "/readyz"]);
    expect(probes("kubecrew-integrations")).toEqual(["/health", "/ready"]);
  });

  it("generates every key in one Secret: a 64-hex encryption key and long random secrets, kept on uninstall", () => {
    const secret = find(byDefault, "Secret", "kubecrew");
    expect(annotations(secret as never)["helm.sh/resource-policy"]).toBe("keep");
    const data = secretData(secret);
    expect(Object.keys(data).sort()).toEqual(
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
    expect(data["oauth-db-encryption-key"]).toMatch(/^[0-9a-f]{64}$/);
    for (const key of [
      "admin-key",
      "apps-signing-key",
      "console-session-secret",
      "oauth-cookie-secret",
      "oauth-internal-api-key",
    ]) {
      expect(data[key]!.length, key).toBeGreaterThanOrEqual(32);
    }
    // Without a cluster to look the Secret up in, every render draws new values.
    expect(secretData(find(render(), "Secret", "kubecrew"))["oauth-db-encryption-key"]).not.toBe(
      data["oauth-db-encryption-key"],
    );
  });

  it("every secretKeyRef points at a key the rendered Secret holds", () => {
    const data = secretData(find(byDefault, "Secret", "kubecrew"));
    let references = 0;
    for (const workload of workloads(byDefault)) {
      for (const c of podTemplate(workload).spec!.containers) {
        for (const entry of c.env ?? []) {
          const ref = entry.valueFrom?.secretKeyRef;
          if (!ref) continue;
          references++;
          expect(ref.name, `${c.name} ${entry.name}`).toBe("kubecrew");
          expect(Object.keys(data), `${c.name} ${entry.name}`).toContain(ref.key);
        }
      }
    }
    expect(references).toBe(13);
  });

  it("signs console sessions with one generated key for every API replica; OpenID Connect sign-in from values", () => {
    const api = container(find(byDefault, "Deployment", "kubecrew-api"));
    const session = envOf(api).get("KUBECREW_CONSOLE_SESSION_SECRET")?.valueFrom?.secretKeyRef;
    expect(session).toMatchObject({ name: "kubecrew", key: "console-session-secret", optional: true });
    expect(envOf(api).has("KUBECREW_CONSOLE_OIDC_ISSUER")).toBe(false);

    const withOidc = container(
      find(
        render({
          values: {
            api: {
              console: {
                publicUrl: "https://crews.example.com",
                oidc: { issuer: "https://dex.example.com", clientId: "kubecrew", clientSecret: { name: "dex-client" } },
                adminGroups: ["platform", "sre"],
                adminEmails: ["ada@example.com"],
              },
            },
          },
        }),
        "Deployment",
        "kubecrew-api",
      ),
    );
    expect(envValue(withOidc, "KUBECREW_CONSOLE_OIDC_ISSUER")).toBe("https://dex.example.com");
    expect(envValue(withOidc, "KUBECREW_CONSOLE_OIDC_CLIENT_ID")).toBe("kubecrew");
    expect(envOf(withOidc).get("KUBECREW_CONSOLE_OIDC_CLIENT_SECRET")?.valueFrom?.secretKeyRef).toEqual({
      name: "dex-client",
      key: "client-secret",
    });
    expect(envValue(withOidc, "KUBECREW_CONSOLE_OIDC_GROUPS_CLAIM")).toBe("groups");
    expect(envValue(withOidc, "KUBECREW_CONSOLE_ADMIN_GROUPS")).toBe("platform,sre");
    expect(envValue(withOidc, "KUBECREW_CONSOLE_ADMIN_EMAILS")).toBe("ada@example.com");
    expect(envValue(withOidc, "KUBECREW_CONSOLE_PUBLIC_URL")).toBe("https://crews.example.com");

    const noSecret = template({
      values: { api: { console: { oidc: { issuer: "https://dex.example.com", clientId: "k" } } } },
    });
    expect(noSecret.status).not.toBe(0);
    expect(noSecret.stderr).toContain("api.console.oidc.clientSecret.name");
  });

  it("gives each component the environment its config module reads", () => {
    const api = container(find(byDefault, "Deployment", "kubecrew-api"));
    expect(envValue(api, "PORT")).toBe("8080");
    expect(envOf(api).get("POD_NAMESPACE")?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.namespace");
    expect(envOf(api).get("KUBECREW_ADMIN_KEY")?.valueFrom?.secretKeyRef?.key).toBe("admin-key");
    expect(envValue(api, "KUBECREW_DEFAULT_CREW")).toBe("research");
    expect(envValue(api, "KUBECREW_TRUST_PROXY")).toBe("0");
    // /connections reaches the integrations service inside the cluster with the internal key.
    expect(envValue(api, "KUBECREW_INTEGRATIONS_URL")).toBe("http://kubecrew-integrations.crews.svc:80");
    expect(envOf(api).get("KUBECREW_OAUTH_INTERNAL_API_KEY")?.valueFrom?.secretKeyRef?.key).toBe(
      "oauth-internal-api-key",
    );
    // The password is expanded by Kubernetes from the variable defined just before.
    const apiEnv = [...envOf(api).keys()];
    expect(apiEnv.indexOf("REDIS_PASSWORD")).toBeLessThan(apiEnv.indexOf("KUBECREW_REDIS_URL"));
    expect(envValue(api, "KUBECREW_REDIS_URL")).toBe("redis://:$(REDIS_PASSWORD)@kubecrew-redis.crews.svc:6379/0");
    // The API's metrics on a port of their own, behind a Service of their own (no Ingress route reaches them).
    expect(envValue(api, "KUBECREW_API_METRICS_PORT")).toBe("8082");
    expect(api.ports).toContainEqual({ name: "metrics", containerPort: 8082, protocol: "TCP" });
    const apiMetrics = find(byDefault, "Service", "kubecrew-api-metrics") as unknown as V1Service;
    expect(apiMetrics.spec!.ports).toEqual([{ name: "metrics", port: 8082, targetPort: "metrics", protocol: "TCP" }]);

    const controller = container(find(byDefault, "Deployment", "kubecrew-controller"));
    expect(envOf(controller).get("KUBECREW_NAMESPACE")?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.namespace");
    expect(envValue(controller, "KUBECREW_RUNNER_IMAGE")).toBe("kubecrew:0.1.0");
    expect(envValue(controller, "KUBECREW_RUNNER_SERVICE_ACCOUNT")).toBe("kubecrew-runner");
    expect(envValue(controller, "KUBECREW_HEALTH_PORT")).toBe("8081");
    expect(envValue(controller, "KUBECREW_LEADER_ELECT")).toBe("true");
    // Connected apps: the integrations service's MCP endpoint in the cluster, the credential key, the revoking key.
    expect(envValue(controller, "KUBECREW_APPS_URL")).toBe("http://kubecrew-integrations.crews.svc:80/v1/mcp");
    expect(envOf(controller).get("KUBECREW_APPS_SIGNING_KEY")?.valueFrom?.secretKeyRef?.key).toBe("apps-signing-key");
    expect(envOf(controller).get("KUBECREW_OAUTH_INTERNAL_API_KEY")?.valueFrom?.secretKeyRef?.key).toBe(
      "oauth-internal-api-key",
    );

    const integrations = container(find(byDefault, "Deployment", "kubecrew-integrations"));
    expect(envValue(integrations, "PORT")).toBe("8787");
    expect(envValue(integrations, "KUBECREW_OAUTH_PUBLIC_URL")).toBe("http://localhost:8787");
    for (const [name, key] of [
      ["KUBECREW_OAUTH_COOKIE_SECRET", "oauth-cookie-secret"],
      ["KUBECREW_OAUTH_DB_ENCRYPTION_KEY", "oauth-db-encryption-key"],
      ["KUBECREW_OAUTH_INTERNAL_API_KEY", "oauth-internal-api-key"],
      ["KUBECREW_APPS_SIGNING_KEY", "apps-signing-key"],
    ]) {
      expect(envOf(integrations).get(name!)?.valueFrom?.secretKeyRef?.key).toBe(key);
    }
  });

  it("runs Redis as a StatefulSet with the append-only file on a PersistentVolumeClaim", () => {
    const redis = find(byDefault, "StatefulSet", "kubecrew-redis");
    const c = container(redis);
    expect(c.command).toEqual(["redis-server"]);
    const args = c.args!.join(" ");
    expect(args).toContain("--appendonly yes");
    expect(args).toContain("--appendfsync everysec");
    expect(args).toContain("--requirepass $(REDIS_PASSWORD)");
    expect(c.workingDir).toBe("/data");
    expect(c.volumeMounts).toContainEqual({ name: "data", mountPath: "/data" });
    const spec = redis.spec as V1StatefulSetSpec;
    expect(spec.volumeClaimTemplates?.[0]).toMatchObject({
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    });
    const noPersistence = find(
      render({ values: { redis: { persistence: { enabled: false } } } }),
      "StatefulSet",
      "kubecrew-redis",
    );
    expect((noPersistence.spec as V1StatefulSetSpec).volumeClaimTemplates).toBeUndefined();
    expect(podTemplate(noPersistence).spec!.volumes).toContainEqual({ name: "data", emptyDir: {} });
  });

  it("Services and PodDisruptionBudgets select exactly their component's pods", () => {
    const podLabels = Object.fromEntries(
      workloads(byDefault).map((w) => [w.metadata.name, podTemplate(w).metadata!.labels!]),
    );
    const selected = (selector: Record<string, string>) =>
      Object.entries(podLabels)
        .filter(([, labels]) => Object.entries(selector).every(([k, v]) => labels[k] === v))
        .map(([name]) => name);
    const services = ofKind(byDefault, "Service") as unknown as (V1Service & Manifest)[];
    for (const service of services) {
      const target = service.metadata.name.replace(/-(headless|metrics)$/, "");
      expect(selected(service.spec!.selector!), service.metadata.name).toEqual([target]);
    }
    for (const pdb of ofKind(byDefault, "PodDisruptionBudget")) {
      const spec = pdb.spec as { maxUnavailable: number; selector: { matchLabels: Record<string, string> } };
      expect(selected(spec.selector.matchLabels)).toEqual([pdb.metadata.name]);
      expect(spec.maxUnavailable).toBe(1);
    }
  });

  it("installs the CRDs of crds/ unchanged but for labels and the keep policy", () => {
    for (const file of [
      "crews.yaml",
      "crewexecutions.yaml",
      "crewtaskresults.yaml",
      "flows.yaml",
      "flowexecutions.yaml",
    ]) {
      const original = parse(readFileSync(join(repo, "crds", file), "utf8")) as Manifest;
      const rendered = find(byDefault, "CustomResourceDefinition", original.metadata.name);
      expect(annotations(rendered as never)).toEqual({ "helm.sh/resource-policy": "keep" });
      expect(rendered.metadata.labels?.["app.kubernetes.io/part-of"]).toBe("kubecrew");
      expect({ ...rendered, metadata: { name: rendered.metadata.name } }).toEqual(original);
    }
    const withoutCrds = render({ values: { crds: { enabled: false } } });
    expect(ofKind(withoutCrds, "CustomResourceDefinition")).toEqual([]);
    const notKept = ofKind(render({ values: { crds: { keep: false } } }), "CustomResourceDefinition");
    expect(notKept.map((crd) => annotations(crd as never)["helm.sh/resource-policy"])).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("installs the example crew of examples/ after the CRDs, on the mock provider, or not at all", () => {
    const crew = find(byDefault, "Crew", "research");
    expect(annotations(crew as never)["helm.sh/hook"]).toBe("post-install,post-upgrade");
    const original = parse(readFileSync(join(repo, "examples", "research-crew.yaml"), "utf8")) as { spec: object };
    expect(crew.spec).toEqual({ ...original.spec, llm: { provider: "mock", model: "mock" } });
    const llm = { provider: "openai", model: "gpt-4o-mini", apiKeySecretRef: { name: "llm", key: "api-key" } };
    expect(find(render({ values: { exampleCrew: { llm } } }), "Crew", "research").spec).toMatchObject({ llm });
    const without = render({ values: { exampleCrew: { enabled: false } } });
    expect(ofKind(without, "Crew")).toEqual([]);
    expect(envOf(container(find(without, "Deployment", "kubecrew-api"))).has("KUBECREW_DEFAULT_CREW")).toBe(false);
  });

  it("prints a port-forward to local port 8080 in the NOTES, or to api.localPort, and the URL that goes with it", () => {
    const notesOf = (...args: string[]) => {
      const result = helm(["install", "kubecrew", chartDir, "--dry-run=client", "--namespace", "crews", ...args]);
      expect(result.status).toBe(0);
      return result.stdout.slice(result.stdout.indexOf("NOTES:"));
    };
    const byDefaultNotes = notesOf();
    expect(byDefaultNotes).toContain("kubectl -n crews port-forward service/kubecrew-api 8080:80 &\n");
    expect(byDefaultNotes).toContain("export KUBECREW_URL=http://localhost:8080\n");
    const moved = notesOf("--set", "api.localPort=18080");
    expect(moved).toContain("kubectl -n crews port-forward service/kubecrew-api 18080:80 &\n");
    expect(moved).toContain("export KUBECREW_URL=http://localhost:18080\n");
  });
});

describe("RBAC", () => {
  it("is namespaced only: Roles and RoleBindings, no ClusterRole, no wildcard", () => {
    for (const manifests of [byDefault, sharedHost, externalRedis, haController, existingSecret]) {
      expect(manifests.filter((m) => m.kind.startsWith("Cluster") && m.kind !== "CustomResourceDefinition")).toEqual(
        [],
      );
      for (const role of ofKind(manifests, "Role")) {
        for (const rule of role.rules as V1PolicyRule[]) {
          expect(
            [...rule.verbs, ...(rule.resources ?? []), ...(rule.apiGroups ?? [])],
            role.metadata.name,
          ).not.toContain("*");
        }
      }
    }
  });

  it("the API reads crews, flows and results, creates and stops executions and flow runs, and may create Secrets but read none", () => {
    // create: the Secret holding the credentials a kickoff gives for its human-input webhook (issue 32).
    expect(rulesOf(byDefault, "kubecrew-api")).toEqual([
      { apiGroups: ["kubecrew.io"], resources: ["crews", "crewtaskresults"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["kubecrew.io"], resources: ["crewexecutions"], verbs: ["create", "get", "list", "watch", "patch"] },
      { apiGroups: ["kubecrew.io"], resources: ["flows"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["kubecrew.io"], resources: ["flowexecutions"], verbs: ["create", "get", "list", "watch", "patch"] },
      { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
    ]);
  });

  it("the runner may create and patch CrewTaskResults and nothing else", () => {
    expect(rulesOf(byDefault, "kubecrew-runner")).toEqual([
      { apiGroups: ["kubecrew.io"], resources: ["crewtaskresults"], verbs: ["create", "patch"] },
    ]);
  });

  it("the controller runs Jobs, writes crew and execution status, holds only its own Lease and may get, create and delete Secrets (never list or watch)", () => {
    const rules = rulesOf(byDefault, "kubecrew-controller");
    const verbsOn = (resource: string) => rules.filter((r) => r.resources?.includes(resource)).flatMap((r) => r.verbs);
    // get: a crew's webhook-signing Secret; create: the one generated for a crew without one (delete: one a deleted
    // Crew of the same name left); create and delete: each execution's app-credential Secret.
    expect(verbsOn("secrets")).toEqual(["get", "create", "delete"]);
    expect(verbsOn("jobs")).toEqual(["get", "list", "watch", "create", "delete", "deletecollection"]);
    expect(verbsOn("configmaps")).toEqual(["get", "create", "delete", "deletecollection"]);
    expect(verbsOn("crewexecutions/status")).toEqual(["get", "patch", "update"]);
    expect(verbsOn("crews/status")).toEqual(["get", "patch", "update"]);
    // create: a flow method's result, and its crew's execution (the Crews a Flow's methods run: create and patch).
    expect(verbsOn("crewtaskresults")).toEqual(["get", "list", "watch", "create"]);
    expect(verbsOn("crewexecutions")).toEqual(["get", "list", "watch", "patch", "update", "create"]);
    expect(verbsOn("crews")).toEqual(["get", "list", "watch", "create", "patch"]);
    expect(verbsOn("flowexecutions/status")).toEqual(["get", "patch", "update"]);
    expect(verbsOn("flows/status")).toEqual(["get", "patch", "update"]);
    // patch: a flow run's webhook deliveries, recorded on it as an execution's are.
    expect(verbsOn("flowexecutions")).toEqual(["get", "list", "watch", "patch"]);
    // pods list and pods/log get: the last log line of a runner that could not report its own result.
    expect(verbsOn("pods")).toEqual(["list"]);
    expect(verbsOn("pods/log")).toEqual(["get"]);
    const leaseId = envValue(
      container(find(byDefault, "Deployment", "kubecrew-controller")),
      "KUBECREW_LEADER_ELECTION_ID",
    );
    expect(rules.filter((r) => r.resources?.includes("leases"))).toEqual([
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], resourceNames: [leaseId], verbs: ["get", "update"] },
    ]);
  });

  it("binds each Role to its component's ServiceAccount, and task pods run as the runner's", () => {
    for (const component of ["api", "controller", "runner"]) {
      const binding = find(byDefault, "RoleBinding", `kubecrew-${component}`);
      expect(binding.roleRef).toEqual({
        apiGroup: "rbac.authorization.k8s.io",
        kind: "Role",
        name: `kubecrew-${component}`,
      });
      expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: `kubecrew-${component}`, namespace: "crews" }]);
    }
    for (const component of ["api", "controller"]) {
      expect(podTemplate(find(byDefault, "Deployment", `kubecrew-${component}`)).spec!.serviceAccountName).toBe(
        `kubecrew-${component}`,
      );
    }
  });
});

/** ingress-nginx with use-regex: a case-insensitive regex anchored at the path's start; rewrite-target fills $n. */
function nginxUpstreamPath(ingress: V1Ingress, requestPath: string): string | undefined {
  const rule = ingress.spec!.rules![0]!.http!.paths[0]!;
  const match = new RegExp(`^${rule.path}`, "i").exec(requestPath);
  if (!match) return undefined;
  const target = annotations(ingress)["nginx.ingress.kubernetes.io/rewrite-target"];
  return target ? target.replace(/\$(\d)/g, (_all, n: string) => match[Number(n)] ?? "") : requestPath;
}

describe("Ingress on a shared host", () => {
  const api = ingressOf(sharedHost, "kubecrew-api");
  const integrations = ingressOf(sharedHost, "kubecrew-integrations");

  it("routes the host's / to the API with a 10m body limit", () => {
    expect(api.spec!.ingressClassName).toBe("nginx");
    expect(api.spec!.rules).toEqual([
      {
        host: "crews.example.com",
        http: {
          paths: [
            { path: "/", pathType: "Prefix", backend: { service: { name: "kubecrew-api", port: { name: "http" } } } },
          ],
        },
      },
    ]);
    expect(annotations(api)["nginx.ingress.kubernetes.io/proxy-body-size"]).toBe("10m");
    expect(api.spec!.tls).toEqual([{ hosts: ["crews.example.com"], secretName: "kubecrew-tls" }]);
  });

  it("routes /oauthsvc on the same host to the integrations service with a regex path and rewrite-target", () => {
    expect(integrations.spec!.rules![0]!.host).toBe("crews.example.com");
    expect(integrations.spec!.rules![0]!.http!.paths).toEqual([
      {
        path: "/oauthsvc(/|$)(.*)",
        pathType: "ImplementationSpecific",
        backend: { service: { name: "kubecrew-integrations", port: { name: "http" } } },
      },
    ]);
    expect(annotations(integrations)).toMatchObject({
      "nginx.ingress.kubernetes.io/use-regex": "true",
      "nginx.ingress.kubernetes.io/rewrite-target": "/$2",
      "nginx.ingress.kubernetes.io/proxy-body-size": "10m",
    });
    // The API's own Ingress carries no rewrite: it would mangle every API path.
    expect(annotations(api)["nginx.ingress.kubernetes.io/rewrite-target"]).toBeUndefined();
  });

  it("strips the prefix: the provider callback reaches the service as /v1/auth/<provider>/callback", () => {
    expect(nginxUpstreamPath(integrations, "/oauthsvc/v1/auth/google/callback")).toBe("/v1/auth/google/callback");
    expect(nginxUpstreamPath(integrations, "/oauthsvc/health")).toBe("/health");
    expect(nginxUpstreamPath(integrations, "/oauthsvc")).toBe("/");
    expect(nginxUpstreamPath(integrations, "/oauthsvcs/health")).toBeUndefined();
    expect(nginxUpstreamPath(integrations, "/kickoff")).toBeUndefined();
  });

  it("tells the integrations service its public URL under the prefix, and the API to trust one proxy hop", () => {
    expect(
      envValue(container(find(sharedHost, "Deployment", "kubecrew-integrations")), "KUBECREW_OAUTH_PUBLIC_URL"),
    ).toBe("https://crews.example.com/oauthsvc");
    expect(envValue(container(find(sharedHost, "Deployment", "kubecrew-api")), "KUBECREW_TRUST_PROXY")).toBe("1");
  });

  it("without the integrations route only the API Ingress is made (the API then explains the missing route)", () => {
    const manifests = render({ values: { ingress: { enabled: true, integrations: { enabled: false } } } });
    expect(ofKind(manifests, "Ingress").map((m) => m.metadata.name)).toEqual(["kubecrew-api"]);
  });

  it("for controllers other than ingress-nginx: a plain prefix path and no nginx annotations", () => {
    const manifests = render({
      values: { ingress: { enabled: true, nginxAnnotations: false, annotations: { "example.com/x": "y" } } },
    });
    const ingress = ingressOf(manifests, "kubecrew-integrations");
    expect(ingress.spec!.rules![0]!.http!.paths[0]).toMatchObject({ path: "/oauthsvc", pathType: "Prefix" });
    expect(annotations(ingress)).toEqual({ "example.com/x": "y" });
    expect(annotations(ingressOf(manifests, "kubecrew-api"))).toEqual({ "example.com/x": "y" });
  });
});

describe("Ingress with a dedicated integrations host", () => {
  const integrations = ingressOf(dedicatedHost, "kubecrew-integrations");

  it("serves the integrations service at / of its own host, without rewriting", () => {
    expect(integrations.spec!.rules).toEqual([
      {
        host: "oauth.example.com",
        http: {
          paths: [
            {
              path: "/",
              pathType: "Prefix",
              backend: { service: { name: "kubecrew-integrations", port: { name: "http" } } },
            },
          ],
        },
      },
    ]);
    expect(annotations(integrations)).toEqual({ "nginx.ingress.kubernetes.io/proxy-body-size": "10m" });
    expect(nginxUpstreamPath(integrations, "/v1/auth/google/callback")).toBe("/v1/auth/google/callback");
    expect(ingressOf(dedicatedHost, "kubecrew-api").spec!.rules![0]!.host).toBe("crews.example.com");
  });

  it("tells the integrations service its public URL at that host", () => {
    expect(
      envValue(container(find(dedicatedHost, "Deployment", "kubecrew-integrations")), "KUBECREW_OAUTH_PUBLIC_URL"),
    ).toBe("http://oauth.example.com");
  });

  it("with TLS, gives the dedicated host a certificate Secret of its own", () => {
    const manifests = render({
      values: { ingress: { enabled: true, tls: { enabled: true }, integrations: { host: "oauth.example.com" } } },
    });
    expect(ingressOf(manifests, "kubecrew-integrations").spec!.tls).toEqual([
      { hosts: ["oauth.example.com"], secretName: "kubecrew-integrations-tls" },
    ]);
  });
});

describe("external Redis", () => {
  it("runs no Redis and hands every component the URL through a Secret", () => {
    expect(ofKind(externalRedis, "StatefulSet")).toEqual([]);
    expect(externalRedis.filter((m) => m.metadata.name.startsWith("kubecrew-redis"))).toEqual([]);
    expect(secretData(find(externalRedis, "Secret", "kubecrew-external-redis"))).toEqual({
      "redis-url": "rediss://:pw@redis.example.com:6380/2",
    });
    expect(Object.keys(secretData(find(externalRedis, "Secret", "kubecrew")))).not.toContain("redis-password");
    for (const name of ["kubecrew-api", "kubecrew-integrations"]) {
      const env = envOf(container(find(externalRedis, "Deployment", name)));
      expect(env.get("KUBECREW_REDIS_URL")?.valueFrom?.secretKeyRef).toEqual({
        name: "kubecrew-external-redis",
        key: "redis-url",
      });
      expect(env.has("REDIS_PASSWORD")).toBe(false);
    }
  });

  it("or takes the URL from an existing Secret", () => {
    const manifests = render({
      values: { redis: { enabled: false }, externalRedis: { existingSecret: "redis-conn", existingSecretKey: "url" } },
    });
    expect(manifests.filter((m) => m.kind === "Secret").map((m) => m.metadata.name)).toEqual(["kubecrew"]);
    const env = envOf(container(find(manifests, "Deployment", "kubecrew-api")));
    expect(env.get("KUBECREW_REDIS_URL")?.valueFrom?.secretKeyRef).toEqual({ name: "redis-conn", key: "url" });
  });

  it("is refused when the chart's Redis is also on, or when no Redis is given at all", () => {
    const both = template({ values: { externalRedis: { url: "redis://redis:6379" } } });
    expect(both.status).not.toBe(0);
    expect(both.stderr).toContain("set redis.enabled=false to use your own Redis");
    const none = template({ values: { redis: { enabled: false } } });
    expect(none.status).not.toBe(0);
    expect(none.stderr).toContain("redis.enabled=false needs externalRedis.url or externalRedis.existingSecret");
  });
});

describe("HA controller", () => {
  const deployment = find(haController, "Deployment", "kubecrew-controller");

  it("runs two replicas with leader election, rolling", () => {
    expect((deployment.spec as { replicas: number }).replicas).toBe(2);
    expect((deployment.spec as { strategy?: unknown }).strategy).toBeUndefined();
    const c = container(deployment);
    expect(envValue(c, "KUBECREW_LEADER_ELECT")).toBe("true");
    expect(envValue(c, "KUBECREW_LEADER_ELECTION_ID")).toBe("kubecrew-controller");
    expect(envOf(c).get("POD_NAME")?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.name");
  });

  it("refuses two replicas without leader election: both would create Jobs", () => {
    const result = template({ values: { controller: { replicas: 2, leaderElection: { enabled: false } } } });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("controller.replicas > 1 needs controller.leaderElection.enabled=true");
  });

  it("without leader election replaces the single controller (Recreate) instead of overlapping two", () => {
    const single = find(
      render({ values: { controller: { leaderElection: { enabled: false } } } }),
      "Deployment",
      "kubecrew-controller",
    );
    expect((single.spec as { strategy: unknown }).strategy).toEqual({ type: "Recreate" });
    expect(envValue(container(single), "KUBECREW_LEADER_ELECT")).toBe("false");
  });
});

describe("existingSecret", () => {
  it("creates no Secret and points every reference at the user's", () => {
    expect(ofKind(existingSecret, "Secret")).toEqual([]);
    const names = new Set<string>();
    for (const workload of workloads(existingSecret)) {
      for (const c of podTemplate(workload).spec!.containers) {
        for (const entry of c.env ?? [])
          if (entry.valueFrom?.secretKeyRef) names.add(entry.valueFrom.secretKeyRef.name!);
      }
    }
    expect([...names]).toEqual(["my-keys"]);
  });
});

describe("values.schema.json", () => {
  it.each([
    ["an unknown top-level key", { replicas: 3 }, "additional properties 'replicas' not allowed"],
    ["an unknown nested key (a typo)", { api: { replica: 2 } }, "additional properties 'replica' not allowed"],
    [
      "an unknown key deep down",
      { ingress: { integrations: { prefix: "/x" } } },
      "additional properties 'prefix' not allowed",
    ],
    ["a wrong type", { api: { replicas: "two" } }, "api/replicas"],
    ["an unknown log level", { logLevel: "verbose" }, "logLevel"],
    [
      "a non-URL external Redis",
      { redis: { enabled: false }, externalRedis: { url: "redis.example.com:6379" } },
      "externalRedis/url",
    ],
  ])("rejects %s", (_name, values, message) => {
    const result = template({ values });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("values don't meet the specifications of the schema");
    expect(result.stderr).toContain(message);
  });

  it("closes every object of the schema (additionalProperties: false) except the pass-through Kubernetes ones", () => {
    const schema = JSON.parse(readFileSync(join(chartDir, "values.schema.json"), "utf8")) as Record<string, unknown>;
    const open: string[] = [];
    const visit = (node: unknown, path: string) => {
      if (!node || typeof node !== "object") return;
      const n = node as Record<string, unknown>;
      if (n.properties) {
        if (n.additionalProperties !== false) open.push(path);
        for (const [key, child] of Object.entries(n.properties as Record<string, unknown>))
          visit(child, `${path}.${key}`);
      }
      for (const key of ["$defs", "items"])
        if (n[key])
          visit(key === "$defs" ? { properties: n[key], additionalProperties: false } : n[key], `${path}.${key}`);
    };
    visit(schema, "values");
    expect(open).toEqual(["values.$defs.envList.items"]);
  });

  it("documents every value in values.yaml with a `# --` comment", () => {
    // A key right under a `# --` comment is documented, and so is everything nested in it (a default given as a
    // block, e.g. resources). Other block keys are sections; every leaf must be documented.
    const lines = readFileSync(join(chartDir, "values.yaml"), "utf8").split("\n");
    const undocumented: string[] = [];
    let coveredBelow = -1; // indentation of the documented block being walked, or -1
    let previous = "";
    for (const line of lines) {
      if (!line.trim()) continue;
      const key = /^(\s*)(?:- )?([A-Za-z][\w-]*):(.*)$/.exec(line);
      if (key && !line.trimStart().startsWith("#")) {
        const indent = key[1]!.length;
        if (coveredBelow >= 0 && indent <= coveredBelow) coveredBelow = -1;
        const documented = previous.trimStart().startsWith("# --");
        const leaf = key[3]!.trim() !== "";
        if (documented && !leaf && coveredBelow < 0) coveredBelow = indent;
        if (leaf && !documented && coveredBelow < 0) undocumented.push(line.trim());
      }
      if (
        !line.trimStart().startsWith("#") ||
        line.trimStart().startsWith("# --") ||
        !previous.trimStart().startsWith("# --")
      )
        previous = line;
    }
    expect(undocumented).toEqual([]);
  });
});
