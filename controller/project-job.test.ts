import { beforeEach, describe, expect, it } from "vitest";
import pino from "pino";
import type { KubeObject } from "../kube/runtime/client.ts";
import * as r from "../kube/resources.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { AppCredentials } from "./app-credentials.ts";
import { createCaches, type Caches } from "./caches.ts";
import { ExecutionReconciler } from "./execution-reconciler.ts";

// A crew whose CrewAI project runs whole (spec.runner.crew): the controller runs it as ONE Job named <execution>-p (a
// name no task's Job has, which the runner results policy lets write every task's result of its execution), adopts
// that Job after a restart instead of starting a second, and deletes that Job when the execution is stopped.

const NS = "team-a";
const ID = "0d5c1f5e-6a3b-4c0f-9a43-3f6f1c1e7a10";
const KEY = `${NS}/${ID}`;
const T0 = Date.parse("2026-03-01T10:00:00.000Z");
const log = pino({ level: "silent" });
const PROJECT_JOB = `${ID}-p`;

const crewObject: KubeObject = {
  apiVersion: r.CREWS.apiVersion,
  kind: r.CREWS.kind,
  metadata: { name: "tidepool", namespace: NS, uid: "crew-uid", generation: 1 },
  spec: {
    runtime: "crewai",
    llm: { provider: "openai", model: "gpt-4o-mini", apiKeySecretRef: { name: "llm", key: "key" } },
    runner: { crew: "tidepool.crew:Tidepool", executionTimeoutSeconds: 600 },
    agents: [{ name: "researcher", role: "Researcher", goal: "Find" }],
    tasks: [
      { name: "research_task", agent: "researcher", description: "Research", expectedOutput: "Bullets" },
      { name: "reporting_task", agent: "researcher", description: "Report", expectedOutput: "A report" },
    ],
  },
};
const executionObject = (spec: { stop?: boolean } = {}, status?: unknown): KubeObject => ({
  apiVersion: r.CREW_EXECUTIONS.apiVersion,
  kind: r.CREW_EXECUTIONS.kind,
  metadata: { name: ID, namespace: NS, uid: "exec-uid", generation: 1 },
  spec: { crewRef: { name: "tidepool" }, inputs: {}, ...spec },
  ...(status ? { status } : {}),
});

describe("a whole CrewAI project's Job", () => {
  let kube: RecordingKube;
  let caches: Caches;
  let clock: number;

  beforeEach(() => {
    kube = new RecordingKube();
    caches = createCaches({ client: kube, log, namespace: NS, watchTimeoutSeconds: 60 });
    clock = T0;
  });

  const reconciler = (appCredentials?: AppCredentials) =>
    new ExecutionReconciler({
      client: kube,
      caches,
      jobSettings: { defaultImage: "kubecrew:test", defaultServiceAccount: "runner", runnerCommand: ["kubecrew"] },
      finishedTtlSeconds: 60,
      now: () => new Date(clock),
      log,
      events: { record: () => undefined },
      webhooks: { enqueue: () => true },
      ...(appCredentials ? { appCredentials } : {}),
    });

  function given(execution: KubeObject, crew = crewObject): void {
    caches.executions.upsert(kube.seed(r.resourcePath(r.CREW_EXECUTIONS, NS), execution));
    caches.crews.upsert(kube.seed(r.resourcePath(r.CREWS, NS), crew));
  }
  const jobs = () => kube.writes.filter((w) => w.verb === "create" && w.path === r.resourcePath(r.JOBS, NS));
  const storedStatus = () => (kube.stored(r.resourcePath(r.CREW_EXECUTIONS, NS, ID)) as { status: unknown }).status;
  const statusWritten = () =>
    kube.writes.filter((w) => w.path.endsWith("/status")).at(-1)?.body as { status: unknown } | undefined;

  it("is <execution>-p, with its assignment's ConfigMap of the same name, the project in it, and no retry", async () => {
    given(executionObject());
    await reconciler().reconcile(KEY);
    expect(kube.log).toEqual([
      `create ${r.resourcePath(r.CONFIG_MAPS, NS)}`,
      `create ${r.resourcePath(r.JOBS, NS)}`,
      `patch ${r.resourcePath(r.CREW_EXECUTIONS, NS, ID)}/status`,
    ]);
    const configMap = kube.stored(r.resourcePath(r.CONFIG_MAPS, NS, PROJECT_JOB)) as { data: Record<string, string> };
    expect(JSON.parse(configMap.data["assignment.json"]!)).toMatchObject({
      task: { name: "research_task", index: 0 },
      project: { crew: "tidepool.crew:Tidepool" },
    });
    const job = kube.stored(r.resourcePath(r.JOBS, NS, PROJECT_JOB)) as {
      metadata: { labels: Record<string, string> };
      spec: { backoffLimit: number; activeDeadlineSeconds: number; template: { spec: { volumes: unknown[] } } };
    };
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 600 });
    expect(job.spec.template.spec.volumes).toContainEqual({ name: "assignment", configMap: { name: PROJECT_JOB } });
    // Observed as the first task's run: its labels are the first task's.
    expect(job.metadata.labels).toMatchObject({ [r.LABEL_EXECUTION]: ID, [r.LABEL_TASK]: "research_task" });
    expect(kube.stored(r.resourcePath(r.JOBS, NS, `${ID}-0`))).toBeUndefined();
    expect(statusWritten()).toMatchObject({ status: { phase: "Running", currentTask: "research_task" } });
  });

  it("of a declared crew CrewAI runs whole, carries every agent's apps credential and MCP header Secrets", async () => {
    // A hierarchical crew: its first task's agent is the manager (no apps); the second agent has apps and a server.
    const declared: KubeObject = {
      ...crewObject,
      spec: {
        runtime: "crewai",
        process: "hierarchical",
        llm: { provider: "openai", model: "gpt-4o-mini", apiKeySecretRef: { name: "llm", key: "key" } },
        managerLlm: { provider: "openai", model: "gpt-4o" },
        runner: { executionTimeoutSeconds: 600 },
        mcpServers: [
          {
            name: "docs",
            url: "http://docs.internal/mcp",
            headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "docs-mcp", key: "token" } } }],
          },
        ],
        agents: [
          { name: "researcher", role: "Researcher", goal: "Find" },
          { name: "mailer", role: "Mailer", goal: "Mail", apps: ["gmail"], mcps: ["docs"] },
        ],
        tasks: [
          { name: "research_task", description: "Research", expectedOutput: "Bullets" },
          { name: "mail_task", agent: "mailer", description: "Mail", expectedOutput: "Sent" },
        ],
      },
    };
    given(executionObject(), declared);
    const settings = {
      url: "http://integrations:8787/v1/mcp",
      signingKey: "apps-signing-key-for-unit-tests-0123456789",
    };
    await reconciler(new AppCredentials({ client: kube, settings, fetch: globalThis.fetch, log })).reconcile(KEY);
    const pod = (
      kube.stored(r.resourcePath(r.JOBS, NS, PROJECT_JOB)) as {
        spec: { template: { spec: { volumes: { name: string }[]; containers: { env: { name: string }[] }[] } } };
      }
    ).spec.template.spec;
    expect(kube.stored(r.resourcePath(r.SECRETS, NS, `${ID}-apps`))).toBeDefined();
    expect(pod.volumes).toContainEqual(expect.objectContaining({ name: "apps-credential" }));
    const env = pod.containers[0]!.env;
    expect(env).toContainEqual({ name: "KUBECREW_APPS_URL", value: settings.url });
    expect(env).toContainEqual({
      name: "KUBECREW_SECRET_DOCS_MCP_TOKEN",
      valueFrom: { secretKeyRef: { name: "docs-mcp", key: "token" } },
    });
  });

  it("is adopted by a restarted controller, whose caches do not show it yet: never a second Job", async () => {
    given(executionObject());
    await reconciler().reconcile(KEY);
    const running = storedStatus();
    // A new controller: fresh caches holding the execution with its status, the Job only in the apiserver.
    caches = createCaches({ client: kube, log, namespace: NS, watchTimeoutSeconds: 60 });
    given(executionObject({}, running));
    clock += 5000;
    await reconciler().reconcile(KEY);
    expect(jobs().map((w) => (w.body as KubeObject).metadata?.name)).toEqual([PROJECT_JOB]);
    // And with the Job in its cache, running the second task after the first one's result: nothing is created.
    caches.jobs.upsert(kube.stored(r.resourcePath(r.JOBS, NS, PROJECT_JOB))!);
    caches.results.upsert(result("research_task", 0));
    clock += 5000;
    await reconciler().reconcile(KEY);
    expect(jobs()).toHaveLength(1);
    expect(statusWritten()).toMatchObject({ status: { currentTask: "reporting_task", progressText: "1/2" } });
  });

  it.each([
    ["the first", false],
    ["a later", true],
  ])("is the Job a stop deletes while %s task runs", async (_which, later) => {
    given(executionObject());
    await reconciler().reconcile(KEY);
    caches.jobs.upsert(kube.stored(r.resourcePath(r.JOBS, NS, PROJECT_JOB))!);
    if (later) {
      caches.results.upsert(result("research_task", 0));
      clock += 5000;
      await reconciler().reconcile(KEY);
    }
    const running = storedStatus();
    expect(running).toMatchObject({ currentTask: later ? "reporting_task" : "research_task" });
    caches.executions.upsert(
      kube.seed(r.resourcePath(r.CREW_EXECUTIONS, NS), executionObject({ stop: true }, running)),
    );
    const before = kube.log.length;
    clock += 5000;
    await reconciler().reconcile(KEY);
    expect(kube.log.slice(before).filter((l) => l.startsWith("delete"))).toEqual([
      `delete ${r.resourcePath(r.JOBS, NS, PROJECT_JOB)}`,
    ]);
    expect(kube.stored(r.resourcePath(r.JOBS, NS, PROJECT_JOB))).toBeUndefined();
    expect(statusWritten()).toMatchObject({ status: { phase: "Stopped", error: "Execution stopped" } });
  });
});

function result(taskName: string, taskIndex: number): KubeObject {
  return {
    apiVersion: r.CREW_TASK_RESULTS.apiVersion,
    kind: r.CREW_TASK_RESULTS.kind,
    metadata: {
      name: `${ID}-${taskIndex}`,
      namespace: NS,
      labels: { [r.LABEL_EXECUTION]: ID, [r.LABEL_TASK]: taskName },
      creationTimestamp: new Date(T0).toISOString(),
    },
    spec: {
      executionRef: { name: ID },
      taskName,
      taskIndex,
      agent: "Researcher",
      output: `output of ${taskName}`,
      attempt: 1,
      executionTime: 4,
    },
  };
}
