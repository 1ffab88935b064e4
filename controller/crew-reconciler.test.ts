import { beforeEach, describe, expect, it } from "vitest";
import pino from "pino";
import type { KubeObject } from "../kube/client.ts";
import { Informer } from "../kube/informer.ts";
import { CREWS, resourcePath } from "../kube/resources.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { StaleObjectError } from "./apply.ts";
import { CrewReconciler } from "./crew-reconciler.ts";

const NS = "team-a";
const crewPath = resourcePath(CREWS, NS, "research");
const crew = (spec: unknown): KubeObject => ({
  apiVersion: CREWS.apiVersion,
  kind: CREWS.kind,
  metadata: { name: "research", namespace: NS, generation: 2 },
  spec,
});
const valid = {
  inputs: [{ name: "topic" }],
  agents: [{ name: "w", role: "Writer", goal: "Write about {topic}" }],
  tasks: [{ name: "draft", agent: "w", description: "Draft", expectedOutput: "A draft" }],
};

describe("CrewReconciler against a recording client", () => {
  let kube: RecordingKube;
  let crews: Informer<KubeObject>;
  let reconciler: CrewReconciler;

  beforeEach(() => {
    kube = new RecordingKube();
    crews = new Informer<KubeObject>({ client: kube, log: pino({ level: "silent" }), path: resourcePath(CREWS, NS) });
    reconciler = new CrewReconciler({ client: kube, crews, now: () => new Date("2026-03-01T10:00:00.000Z") });
  });

  it("writes the Ready status of a valid crew once, then nothing while nothing changes", async () => {
    crews.upsert(kube.seed(resourcePath(CREWS, NS), crew(valid)));
    await reconciler.reconcile(`${NS}/research`);
    expect(kube.log).toEqual([`patch ${crewPath}/status`]);
    expect(kube.writes[0]!.body).toMatchObject({
      status: {
        observedGeneration: 2,
        inputs: ["topic"],
        taskCount: 1,
        conditions: [{ type: "Ready", status: "True", reason: "Valid", message: "1 tasks, 1 agents" }],
      },
    });
    await reconciler.reconcile(`${NS}/research`);
    await reconciler.reconcile(`${NS}/research`);
    expect(kube.writes).toHaveLength(1);
  });

  it("says what is wrong with a crew the CRD's validation let through", async () => {
    const broken = { ...valid, tasks: [{ ...valid.tasks[0], agent: "nobody" }] };
    crews.upsert(kube.seed(resourcePath(CREWS, NS), crew(broken)));
    await reconciler.reconcile(`${NS}/research`);
    expect(kube.writes[0]!.body).toMatchObject({
      status: { conditions: [{ type: "Ready", status: "False", reason: "InvalidSpec" }] },
    });
  });

  it("writes nothing for a crew that is gone or being deleted", async () => {
    await reconciler.reconcile(`${NS}/research`);
    const deleting = crew(valid);
    deleting.metadata!.deletionTimestamp = "2026-03-01T09:00:00.000Z";
    crews.upsert(kube.seed(resourcePath(CREWS, NS), deleting));
    await reconciler.reconcile(`${NS}/research`);
    expect(kube.writes).toEqual([]);
  });

  it("fails with StaleObjectError when the crew changed since the cache saw it", async () => {
    crews.upsert(kube.seed(resourcePath(CREWS, NS), crew(valid)));
    await kube.mergePatch(crewPath, { metadata: { labels: { touched: "yes" } } });
    await expect(reconciler.reconcile(`${NS}/research`)).rejects.toThrow(StaleObjectError);
  });
});
