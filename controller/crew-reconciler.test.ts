import { beforeEach, describe, expect, it } from "vitest";
import pino from "pino";
import type { KubeObject } from "../kube/runtime/client.ts";
import { Informer } from "../kube/runtime/informer.ts";
import type { Undecodable } from "../kube/runtime/undecodable.ts";
import { decodeCrew, type CachedCrew } from "../kube/typed-objects.ts";
import { CREWS, resourcePath, SECRETS } from "../kube/resources.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { StaleObjectError } from "../kube/runtime/worker.ts";
import { CrewReconciler } from "./crew-reconciler.ts";
import { CrewSigningSecrets } from "./crew-signing-secret.ts";
import { WEBHOOK_SECRET_ANNOTATION } from "./webhook-secrets.ts";

const NS = "team-a";
const crewPath = resourcePath(CREWS, NS, "research");
const secrets = resourcePath(SECRETS, NS);
const secretPath = resourcePath(SECRETS, NS, "research-webhook");
const UID = "0b6f0c2e-crew-uid";
const crew = (spec: unknown, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: CREWS.apiVersion,
  kind: CREWS.kind,
  metadata: { name: "research", namespace: NS, uid: UID, generation: 2, ...(annotations ? { annotations } : {}) },
  spec,
});
const generatedSigning = { secretRef: { name: "research-webhook", key: "secret" }, generated: true };
const valid = {
  inputs: [{ name: "topic" }],
  agents: [{ name: "w", role: "Writer", goal: "Write about {topic}" }],
  tasks: [{ name: "draft", agent: "w", description: "Draft", expectedOutput: "A draft" }],
};

describe("CrewReconciler against a recording client", () => {
  let kube: RecordingKube;
  let crews: Informer<CachedCrew | Undecodable>;
  let reconciler: CrewReconciler;
  let logLines: string[];
  let events: { kind?: string; name: string; type: string; reason: string; message: string }[];

  beforeEach(() => {
    kube = new RecordingKube();
    logLines = [];
    events = [];
    const log = pino({ level: "info" }, { write: (line: string) => void logLines.push(line) });
    crews = new Informer({ client: kube, log, path: resourcePath(CREWS, NS), transform: decodeCrew });
    reconciler = new CrewReconciler({
      client: kube,
      crews,
      signingSecrets: new CrewSigningSecrets({ client: kube, secretKey: "secret", log }),
      events: { record: (target, type, reason, message) => events.push({ ...target, type, reason, message }) },
      now: () => new Date("2026-03-01T10:00:00.000Z"),
    });
  });

  /** The generated signing key, as the stored Secret holds it. */
  const generatedKey = () =>
    Buffer.from((kube.stored(secretPath) as { data: { secret: string } }).data.secret, "base64").toString("utf8");

  it("writes the Ready status of a valid crew once, then nothing while nothing changes", async () => {
    crews.upsert(kube.seed(resourcePath(CREWS, NS), crew(valid)));
    await reconciler.reconcile(`${NS}/research`);
    expect(kube.log).toEqual([`create ${secrets}`, `patch ${crewPath}/status`]);
    expect(kube.writes[1]!.body).toMatchObject({
      status: {
        observedGeneration: 2,
        inputs: ["topic"],
        taskCount: 1,
        conditions: [{ type: "Ready", status: "True", reason: "Valid", message: "1 tasks, 1 agents" }],
        webhookSigning: generatedSigning,
      },
    });
    await reconciler.reconcile(`${NS}/research`);
    await reconciler.reconcile(`${NS}/research`);
    expect(kube.writes).toHaveLength(2);
  });

  it("generates a signing Secret for a crew without one: owned by the Crew, its value in no status and no log", async () => {
    crews.upsert(kube.seed(resourcePath(CREWS, NS), crew(valid)));
    await reconciler.reconcile(`${NS}/research`);
    const secret = kube.stored(secretPath)!;
    expect(secret).toMatchObject({
      type: "Opaque",
      metadata: {
        labels: { "kubecrew.io/crew": "research", "app.kubernetes.io/managed-by": "kubecrew" },
        ownerReferences: [
          { apiVersion: "kubecrew.io/v1alpha1", kind: "Crew", name: "research", uid: UID, controller: true },
        ],
      },
    });
    const key = generatedKey();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    const status = JSON.stringify(kube.stored(crewPath)!.status);
    expect(status).toContain("research-webhook");
    expect(status).not.toContain(key);
    expect(logLines.join("")).toContain("Webhook signing Secret generated");
    expect(logLines.join("")).not.toContain(key);
    expect(logLines.join("")).not.toContain((secret as { data: { secret: string } }).data.secret);
  });

  it("gives each crew its own key", async () => {
    crews.upsert(kube.seed(resourcePath(CREWS, NS), crew(valid)));
    await reconciler.reconcile(`${NS}/research`);
    const first = generatedKey();
    const other = crew(valid);
    other.metadata = { ...other.metadata, name: "other", uid: "another-uid" };
    crews.upsert(kube.seed(resourcePath(CREWS, NS), other));
    await reconciler.reconcile(`${NS}/other`);
    const second = kube.stored(resourcePath(SECRETS, NS, "other-webhook")) as { data: { secret: string } };
    expect(Buffer.from(second.data.secret, "base64").toString("utf8")).not.toBe(first);
  });

  it("keeps the crew's own <crew>-webhook Secret: no write to it, status generated false", async () => {
    kube.seed(secrets, { metadata: { name: "research-webhook", namespace: NS }, data: { secret: "b3du" } });
    crews.upsert(kube.seed(resourcePath(CREWS, NS), crew(valid)));
    await reconciler.reconcile(`${NS}/research`);
    expect(kube.log).toEqual([`patch ${crewPath}/status`]);
    expect(kube.stored(crewPath)!.status).toMatchObject({ webhookSigning: { ...generatedSigning, generated: false } });
  });

  it("names the Secret the crew's annotation names, without reading or creating any", async () => {
    crews.upsert(kube.seed(resourcePath(CREWS, NS), crew(valid, { [WEBHOOK_SECRET_ANNOTATION]: "shared-hooks" })));
    await reconciler.reconcile(`${NS}/research`);
    expect(kube.log).toEqual([`patch ${crewPath}/status`]);
    expect(kube.reads).toEqual([]);
    expect(kube.stored(crewPath)!.status).toMatchObject({
      webhookSigning: { secretRef: { name: "shared-hooks", key: "secret" }, generated: false },
    });
  });

  it("replaces a Secret generated for an earlier Crew of the same name, which the garbage collector would take", async () => {
    const stale = {
      metadata: {
        name: "research-webhook",
        namespace: NS,
        uid: "stale-secret-uid",
        ownerReferences: [
          { apiVersion: CREWS.apiVersion, kind: CREWS.kind, name: "research", uid: "gone", controller: true },
        ],
      },
      data: { secret: Buffer.from("old-key").toString("base64") },
    };
    kube.seed(secrets, stale);
    crews.upsert(kube.seed(resourcePath(CREWS, NS), crew(valid)));
    await reconciler.reconcile(`${NS}/research`);
    expect(kube.log).toEqual([`delete ${secretPath}`, `create ${secrets}`, `patch ${crewPath}/status`]);
    expect(kube.writes[0]!.body).toEqual({ uid: "stale-secret-uid" });
    expect(kube.stored(secretPath)!.metadata!.ownerReferences![0]!.uid).toBe(UID);
    expect(generatedKey()).not.toBe("old-key");
  });

  it("says what is wrong with a crew the CRD's validation let through, once: its Ready condition and a Warning Event", async () => {
    const broken = { ...valid, tasks: [{ ...valid.tasks[0], agent: "nobody" }] };
    crews.upsert(kube.seed(resourcePath(CREWS, NS), crew(broken)));
    await reconciler.reconcile(`${NS}/research`);
    expect(kube.writes.at(-1)!.body).toMatchObject({
      status: {
        conditions: [{ type: "Ready", status: "False", reason: "InvalidSpec" }],
        webhookSigning: generatedSigning,
      },
    });
    const ready = (kube.stored(crewPath)!.status as { conditions: { message: string }[] }).conditions[0]!;
    expect(ready.message).toContain('"nobody"');
    expect(events).toEqual([
      {
        name: "research",
        namespace: NS,
        uid: UID,
        apiVersion: CREWS.apiVersion,
        kind: "Crew",
        type: "Warning",
        reason: "InvalidSpec",
        message: ready.message,
      },
    ]);
    // Reconciled again (a resync, a restarted controller reading the status it wrote): nothing more is said.
    const writes = kube.writes.length;
    await reconciler.reconcile(`${NS}/research`);
    expect(kube.writes).toHaveLength(writes);
    expect(events).toHaveLength(1);
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
