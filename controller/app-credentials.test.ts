import { beforeEach, describe, expect, it } from "vitest";
import pino from "pino";
import { verifyAppCredential } from "../core/app-credential.ts";
import { crewSpec } from "../core/crew-resource.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import * as r from "../kube/resources.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { AppCredentials } from "./app-credentials.ts";
import { createCaches, type Caches } from "./caches.ts";
import { ExecutionReconciler } from "./execution-reconciler.ts";

const NS = "team-a";
const ID = "0d5c1f5e-6a3b-4c0f-9a43-3f6f1c1e7a10";
const KEY = `${NS}/${ID}`;
const T0 = Date.parse("2026-03-01T10:00:00.000Z");
const SIGNING_KEY = "apps-signing-key-for-unit-tests-0123456789";
const INTERNAL_KEY = "internal-key-for-unit-tests";
const APPS_URL = "http://kubecrew-integrations.kubecrew:8787/v1/mcp";
const log = pino({ level: "silent" });
const secretPath = r.resourcePath(r.SECRETS, NS, `${ID}-apps`);

const spec = (apps: string[]) => ({
  agents: [
    { name: "mailer", role: "Mailer", goal: "Mail", apps },
    { name: "w", role: "Writer", goal: "Write" },
  ],
  tasks: [
    { name: "mail", agent: "mailer", description: "Mail", expectedOutput: "Sent" },
    { name: "write", agent: "w", description: "Write", expectedOutput: "Text" },
  ],
});
const crewObject = (apps: string[]): KubeObject => ({
  apiVersion: r.CREWS.apiVersion,
  kind: r.CREWS.kind,
  metadata: { name: "research", namespace: NS, uid: "crew-uid", generation: 1 },
  spec: spec(apps),
});
const executionObject = (status?: unknown): KubeObject => ({
  apiVersion: r.CREW_EXECUTIONS.apiVersion,
  kind: r.CREW_EXECUTIONS.kind,
  metadata: { name: ID, namespace: NS, uid: "exec-uid", generation: 1 },
  spec: { crewRef: { name: "research" }, inputs: {}, requestedBy: { kind: "user", subject: "alice", user: "alice" } },
  ...(status ? { status } : {}),
});

type Container = {
  env: { name: string; value?: string }[];
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
};
type PodSpec = { containers: Container[]; volumes: { name: string; secret?: { secretName: string } }[] };
const podSpec = (job: KubeObject | undefined) => (job as { spec: { template: { spec: PodSpec } } }).spec.template.spec;

describe("the controller's app credentials (recording client)", () => {
  let kube: RecordingKube;
  let caches: Caches;
  let revocations: { url: string; authorization: string; body: unknown }[];
  let revokeStatus: number;
  let reconciler: ExecutionReconciler;

  beforeEach(() => {
    kube = new RecordingKube();
    caches = createCaches({ client: kube, log, namespace: NS, watchTimeoutSeconds: 60 });
    revocations = [];
    revokeStatus = 200;
    const fetch = (async (url: string, init: RequestInit) => {
      revocations.push({
        url,
        authorization: (init.headers as Record<string, string>).authorization!,
        body: JSON.parse(String(init.body)),
      });
      return new Response("{}", { status: revokeStatus });
    }) as typeof globalThis.fetch;
    reconciler = reconcilerWith(
      new AppCredentials({
        client: kube,
        settings: {
          url: APPS_URL,
          signingKey: SIGNING_KEY,
          revoke: { integrationsUrl: "http://kubecrew-integrations.kubecrew:8787", internalApiKey: INTERNAL_KEY },
        },
        fetch,
        log,
      }),
    );
  });

  /** A reconciler with these app credentials, or one of a controller without apps settings. */
  function reconcilerWith(appCredentials?: AppCredentials): ExecutionReconciler {
    return new ExecutionReconciler({
      client: kube,
      caches,
      jobSettings: { defaultImage: "kubecrew:test", defaultServiceAccount: "runner", runnerCommand: ["kubecrew"] },
      finishedTtlSeconds: 60,
      now: () => new Date(T0),
      log,
      events: { record: () => undefined },
      webhooks: { enqueue: () => true },
      ...(appCredentials ? { appCredentials } : {}),
    });
  }

  function given(execution: KubeObject, apps: string[]): void {
    caches.executions.upsert(kube.seed(r.resourcePath(r.CREW_EXECUTIONS, NS), execution));
    caches.crews.upsert(kube.seed(r.resourcePath(r.CREWS, NS), crewObject(apps)));
  }

  it("mints the credential into the execution's Secret before its first Job, and mounts it for agents with apps", async () => {
    given(executionObject(), ["gmail/send_email"]);
    await reconciler.reconcile(KEY);
    expect(kube.log.slice(0, 3)).toEqual([
      `create ${r.resourcePath(r.SECRETS, NS)}`,
      `create ${r.resourcePath(r.CONFIG_MAPS, NS)}`,
      `create ${r.resourcePath(r.JOBS, NS)}`,
    ]);
    const secret = kube.stored(secretPath) as KubeObject & { stringData: { credential: string } };
    expect(secret.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "CrewExecution", name: ID, uid: "exec-uid", controller: true }),
    ]);
    const claims = await verifyAppCredential(SIGNING_KEY, secret.stringData.credential, new Date(T0));
    expect(claims).toMatchObject({
      executionUid: "exec-uid",
      execution: `${NS}/${ID}`,
      user: "alice",
      apps: ["gmail/send_email"],
      expiresAt: new Date(T0 + 3600_000),
    });

    const pod = podSpec(kube.stored(r.resourcePath(r.JOBS, NS, `${ID}-0`)));
    const runner = pod.containers[0]!;
    expect(pod.volumes).toContainEqual(
      expect.objectContaining({
        name: "apps-credential",
        secret: expect.objectContaining({ secretName: `${ID}-apps` }),
      }),
    );
    expect(runner.volumeMounts).toContainEqual({
      name: "apps-credential",
      mountPath: "/etc/kubecrew/apps",
      readOnly: true,
    });
    expect(runner.env).toContainEqual({ name: "KUBECREW_APPS_URL", value: APPS_URL });
    expect(runner.env.map((e) => e.name)).not.toContain("KUBECREW_OAUTH_INTERNAL_API_KEY");
    expect(JSON.stringify(kube.stored(r.resourcePath(r.JOBS, NS, `${ID}-0`)))).not.toContain(
      secret.stringData.credential,
    );
    expect(JSON.stringify(kube.writes.filter((w) => !w.path.includes("/secrets")))).not.toContain(INTERNAL_KEY);
  });

  it("creates no Secret and mounts nothing for a crew without apps", async () => {
    given(executionObject(), []);
    await reconciler.reconcile(KEY);
    expect(kube.log.some((line) => line.includes("/secrets"))).toBe(false);
    const pod = podSpec(kube.stored(r.resourcePath(r.JOBS, NS, `${ID}-0`)));
    expect(pod.volumes.map((v) => v.name)).not.toContain("apps-credential");
  });

  it("revokes a finished execution's credential at the integrations service, then deletes its Secret, once", async () => {
    const status = {
      phase: "Succeeded",
      startTime: new Date(T0 - 60_000).toISOString(),
      completionTime: new Date(T0).toISOString(),
      crewSpec: crewSpec.parse(spec(["gmail"])),
    };
    given(executionObject(status), ["gmail"]);
    kube.seed(r.resourcePath(r.SECRETS, NS), { apiVersion: "v1", kind: "Secret", metadata: { name: `${ID}-apps` } });
    await reconciler.reconcile(KEY);
    expect(revocations).toEqual([
      {
        url: "http://kubecrew-integrations.kubecrew:8787/v1/internal/app-credentials/revoke",
        authorization: `Bearer ${INTERNAL_KEY}`,
        body: { executionUid: "exec-uid", expiresAt: new Date(T0 - 60_000 + 3600_000).toISOString() },
      },
    ]);
    expect(kube.log).toContain(`delete ${secretPath}`);
    expect(kube.stored(secretPath)).toBeUndefined();
    await reconciler.reconcile(KEY);
    expect(revocations).toHaveLength(1);
  });

  it("keeps the Secret and tries again when the revocation fails", async () => {
    const status = {
      phase: "Failed",
      startTime: new Date(T0 - 60_000).toISOString(),
      crewSpec: crewSpec.parse(spec(["gmail"])),
    };
    given(executionObject(status), ["gmail"]);
    kube.seed(r.resourcePath(r.SECRETS, NS), { apiVersion: "v1", kind: "Secret", metadata: { name: `${ID}-apps` } });
    revokeStatus = 503;
    await expect(reconciler.reconcile(KEY)).rejects.toThrow(/answered HTTP 503/);
    expect(kube.stored(secretPath)).toBeDefined();
    revokeStatus = 200;
    await reconciler.reconcile(KEY);
    expect(revocations).toHaveLength(2);
    expect(kube.stored(secretPath)).toBeUndefined();
  });
  it("deletes the Secret of an execution that finished after its credential expired, without revoking it", async () => {
    // A controller that starts (or restarts) after the execution's deadline: the credential is refused anyway.
    const status = {
      phase: "Succeeded",
      startTime: new Date(T0 - 3700_000).toISOString(),
      completionTime: new Date(T0 - 1000).toISOString(),
      crewSpec: crewSpec.parse(spec(["gmail"])),
    };
    given(executionObject(status), ["gmail"]);
    kube.seed(r.resourcePath(r.SECRETS, NS), { apiVersion: "v1", kind: "Secret", metadata: { name: `${ID}-apps` } });
    await reconciler.reconcile(KEY);
    expect(revocations).toEqual([]);
    expect(kube.stored(secretPath)).toBeUndefined();
  });

  it("mints the Secret with a later task of an agent with apps when the first task started without it", async () => {
    // The first task (no apps) started under a controller without apps settings; this one has them (an upgrade
    // that switched apps on mid-run): the apps task's pod must not mount a Secret nobody created.
    const writerFirst = { ...spec(["gmail/send_email"]), tasks: spec([]).tasks.toReversed() };
    caches.executions.upsert(kube.seed(r.resourcePath(r.CREW_EXECUTIONS, NS), executionObject()));
    caches.crews.upsert(kube.seed(r.resourcePath(r.CREWS, NS), { ...crewObject([]), spec: writerFirst } as KubeObject));
    await reconcilerWith().reconcile(KEY);
    expect(kube.stored(secretPath)).toBeUndefined();
    const job = kube.stored(r.resourcePath(r.JOBS, NS, `${ID}-0`))!;
    caches.jobs.upsert({
      ...job,
      status: { startTime: new Date(T0).toISOString(), conditions: [{ type: "Complete", status: "True" }] },
    });
    caches.results.upsert({
      apiVersion: r.CREW_TASK_RESULTS.apiVersion,
      kind: r.CREW_TASK_RESULTS.kind,
      metadata: {
        name: `${ID}-0`,
        namespace: NS,
        labels: { [r.LABEL_EXECUTION]: ID, [r.LABEL_TASK]: "write" },
        creationTimestamp: new Date(T0).toISOString(),
      },
      spec: {
        executionRef: { name: ID },
        taskName: "write",
        taskIndex: 0,
        agent: "Writer",
        output: "text",
        attempt: 1,
        executionTime: 4,
      },
    });

    await reconciler.reconcile(KEY);
    const created = kube.log.filter((line) => line.startsWith("create "));
    expect(created.slice(-3)).toEqual([
      `create ${r.resourcePath(r.SECRETS, NS)}`,
      `create ${r.resourcePath(r.CONFIG_MAPS, NS)}`,
      `create ${r.resourcePath(r.JOBS, NS)}`,
    ]);
    expect(kube.stored(secretPath)).toBeDefined();
    expect(podSpec(kube.stored(r.resourcePath(r.JOBS, NS, `${ID}-1`))).volumes).toContainEqual(
      expect.objectContaining({ secret: expect.objectContaining({ secretName: `${ID}-apps` }) }),
    );
  });
});
