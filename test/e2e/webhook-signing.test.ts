import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { crewSuite } from "./support/crew-suite.ts";
import { crewYaml, finalStatus, kickoff, waitFor, type Loose } from "./support/fixture.ts";
import { hostForPods } from "./support/installed.ts";
import { kubectl, kubectlStatus } from "./support/kubectl.ts";
import { startWebhookReceiver, type ReceivedHook, type WebhookReceiver } from "./support/webhook-receiver.ts";

// Issue 28, defect 7: a crew without a signing Secret got unsigned webhooks. Now the crew reconciler generates
// `<crew>-webhook` for it (owned by the Crew, named in its status, its value nowhere else), every delivery is signed,
// the owner reads the key with kubectl, and the Secret goes with the Crew (garbage collection, kube-controller-manager).
// A crew with its own Secret keeps it, untouched.

const kubeconfig = inject("kubeconfig");
let receiver: WebhookReceiver;

const getJson = async (args: string[]): Promise<Loose> =>
  JSON.parse(await kubectl(kubeconfig, [...args, "-n", suite.namespace, "-o", "json"]));

/** What the crew's owner runs to read the key: kubectl get secret, base64 -d. */
async function keyOf(secret: string): Promise<string> {
  const encoded = await kubectl(kubeconfig, [
    "get",
    "secret",
    secret,
    "-n",
    suite.namespace,
    "-o",
    "jsonpath={.data.secret}",
  ]);
  return Buffer.from(encoded, "base64").toString("utf8");
}

const verifies = (hook: ReceivedHook, key: string) =>
  hook.headers["x-kubecrew-signature"] ===
  "sha256=" + createHmac("sha256", key).update(`${hook.headers["x-kubecrew-timestamp"]}.${hook.body}`).digest("hex");

/** A run with task and crew webhooks: the deliveries it got, once all three arrived. */
async function hooksOfRun(crew: string): Promise<ReceivedHook[]> {
  const id = await kickoff(suite.api, crew, {
    taskWebhookUrl: `${receiver.url}/task`,
    crewWebhookUrl: `${receiver.url}/crew`,
  });
  expect((await finalStatus(suite.api, crew, id)).status).toBe("completed");
  const mine = () => receiver.hooks.filter((h) => JSON.parse(h.body).kickoff_id === id);
  await waitFor(`${crew}'s 3 webhooks`, async () => mine().length >= 3, 30_000);
  return mine();
}

const suite = crewSuite(kubeconfig, {
  prefix: "signing",
  before: async () => {
    receiver = await startWebhookReceiver(hostForPods());
  },
  after: async () => {
    receiver?.close();
  },
  // The crew's own Secret comes first, as its owner would create it.
  secrets: { "signed-own-webhook": { secret: "own-s3cret" } },
  crews: () => [crewYaml("signed-gen", "mock", { tasks: 2 }), crewYaml("signed-own", "mock", { tasks: 2 })],
  controllerIdentity: "signing",
});

describe("webhook signing in a cluster", () => {
  it("generates <crew>-webhook for a crew without one, owned by the Crew and named (only) in its status", async () => {
    const crew = await getJson(["get", "crew", "signed-gen"]);
    const signing = await waitFor("the Crew's status names its signing Secret", async () => {
      const status = (await getJson(["get", "crew", "signed-gen"])).status;
      return status?.webhookSigning;
    });
    expect(signing).toEqual({ secretRef: { name: "signed-gen-webhook", key: "secret" }, generated: true });
    const secret = await getJson(["get", "secret", "signed-gen-webhook"]);
    expect(secret.metadata.ownerReferences).toEqual([
      {
        apiVersion: "kubecrew.io/v1alpha1",
        kind: "Crew",
        name: "signed-gen",
        uid: crew.metadata.uid,
        controller: true,
      },
    ]);
    expect(secret.metadata.labels).toMatchObject({ "kubecrew.io/crew": "signed-gen" });
    const key = await keyOf("signed-gen-webhook");
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    // The key is in the Secret only: not in the Crew, not in an event, not in the controller's log.
    expect(JSON.stringify(await getJson(["get", "crew", "signed-gen"]))).not.toContain(key);
    expect(await kubectl(kubeconfig, ["get", "events", "-n", suite.namespace, "-o", "json"])).not.toContain(key);
    if (suite.controller) expect(readFileSync(suite.controller.logFile, "utf8")).not.toContain(key);
  });

  it("signs every delivery of that crew with the generated key its owner reads with kubectl", async () => {
    await waitFor(
      "the generated Secret",
      async () => (await getJson(["get", "secret", "signed-gen-webhook"])) as Loose,
    );
    const key = await keyOf("signed-gen-webhook");
    const hooks = await hooksOfRun("signed-gen");
    expect(hooks.map((h) => h.path).sort()).toEqual(["/crew", "/task", "/task"]);
    for (const hook of hooks) expect(verifies(hook, key), hook.path).toBe(true);
  });

  it("names the Secret, not its value, at GET /webhook-signing (the API cannot read Secrets)", async () => {
    const res = await suite.api.call("/crews/signed-gen/webhook-signing");
    expect(res).toEqual({
      status: 200,
      body: { generated: true, secret_ref: { name: "signed-gen-webhook", key: "secret" } },
    });
  });

  it("keeps a crew's own Secret: not owned, not changed, and its key signs the deliveries", async () => {
    const signing = await waitFor("the Crew's status names its signing Secret", async () => {
      return (await getJson(["get", "crew", "signed-own"])).status?.webhookSigning;
    });
    expect(signing).toEqual({ secretRef: { name: "signed-own-webhook", key: "secret" }, generated: false });
    const secret = await getJson(["get", "secret", "signed-own-webhook"]);
    expect(secret.metadata.ownerReferences).toBeUndefined();
    expect(await keyOf("signed-own-webhook")).toBe("own-s3cret");
    for (const hook of await hooksOfRun("signed-own")) expect(verifies(hook, "own-s3cret"), hook.path).toBe(true);
  });

  it("deleting the Crew deletes the generated Secret, and leaves a crew's own", async () => {
    expect(await keyOf("signed-gen-webhook")).toMatch(/^[0-9a-f]{64}$/);
    await kubectl(kubeconfig, ["delete", "crew", "signed-gen", "signed-own", "-n", suite.namespace]);
    await waitFor(
      "the garbage collector to delete signed-gen-webhook",
      async () => {
        const get = await kubectlStatus(kubeconfig, ["get", "secret", "signed-gen-webhook", "-n", suite.namespace]);
        return get.code !== 0 && get.stderr.includes("NotFound");
      },
      60_000,
    );
    expect(await keyOf("signed-own-webhook")).toBe("own-s3cret");
  });
});
