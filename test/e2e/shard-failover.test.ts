import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { shardOf } from "../../kube/runtime/shard.ts";
import { LEASES, resourcePath } from "../../kube/resources.ts";
import type { Lease } from "../../kube/runtime/lease.ts";
import { shardLeaseName } from "../../kube/runtime/shard-elector.ts";
import { kubectl } from "./support/kubectl.ts";
import {
  crewYaml,
  finalStatus,
  jobsOf,
  kickoff,
  resultsOf,
  sleep,
  waitFor,
  type ControllerProcess,
} from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.ts";

/**
 * Two controller replicas with two shards (KUBECREW_CONTROLLER_SHARDS=2, the shard Lease defaults: 8 s duration,
 * 2 s retry period): each holds one shard and runs only its executions. One replica is SIGKILLed mid-run (no
 * release): the other takes its shard's Lease within 15 s and finishes its executions, each task run by exactly one
 * Job, each crew webhook received once per delivery id.
 */
const kubeconfig = inject("kubeconfig");
const ELECTION_ID = "kubecrew-controller";
const TASKS = 3;
let system: OwnSystem;
let receiver: WebhookReceiver;

beforeAll(async () => {
  system = await startOwnSystem(kubeconfig, "shards", {
    crews: [crewYaml("halves", "sleep-1500", { tasks: TASKS })],
    killWith: "SIGKILL",
  });
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await system?.stop();
  receiver?.close();
});

/** The shards a replica says it holds, from its /metrics. */
async function heldShards(c: ControllerProcess): Promise<number[]> {
  const text = await (await fetch(`${c.url}/metrics`)).text();
  return [...text.matchAll(/^kubecrew_controller_shard_held\{shard="(\d+)"\} 1$/gm)].map((m) => Number(m[1]));
}

async function leaseHolder(shard: number): Promise<string> {
  const path = resourcePath(LEASES, system.namespace, shardLeaseName(ELECTION_ID, shard));
  const lease = await system.client.get<Lease>(path);
  return lease.spec.holderIdentity ?? "";
}

async function uidOf(id: string): Promise<string> {
  const args = ["get", "ce", id, "-n", system.namespace, "-o", "jsonpath={.metadata.uid}"];
  return (await kubectl(kubeconfig, args)).trim();
}

describe.skipIf(installed)("executions sharded across two controller replicas", () => {
  it("a SIGKILLed replica's shard is taken over within 15 s and its executions finish, each task once", async () => {
    const { api, namespace } = system;
    const env = { KUBECREW_CONTROLLER_SHARDS: "2" };
    for (const identity of ["shard-a", "shard-b"])
      await system.startController({ identity, env, waitForLeader: false });
    const [a, b] = system.controllers as [ControllerProcess, ControllerProcess];
    // Each replica settles on one shard (its fair share, ceil(2/2)).
    await waitFor(
      "one shard each",
      async () => {
        const [heldA, heldB] = [await heldShards(a), await heldShards(b)];
        return heldA.length === 1 && heldB.length === 1 && heldA[0] !== heldB[0];
      },
      30_000,
    );

    // Executions of both shards (by the hash of their uid): at least two in each.
    const ids: string[] = [];
    const shardOfId = new Map<string, number>();
    while (ids.length < 12) {
      const id = await kickoff(api, "halves", { crewWebhookUrl: `${receiver.url}/crew` });
      ids.push(id);
      shardOfId.set(id, shardOf(await uidOf(id), 2));
      const counts = [0, 1].map((s) => ids.filter((i) => shardOfId.get(i) === s).length);
      if (ids.length >= 6 && counts.every((n) => n >= 2)) break;
    }
    const victimShard = (await heldShards(b))[0]!;
    const victims = ids.filter((id) => shardOfId.get(id) === victimShard);
    expect(victims.length).toBeGreaterThanOrEqual(2);

    // b works on its executions: a Job of one of them exists. Then it is SIGKILLed while they run.
    await waitFor(
      "the victim shard's first Jobs",
      async () => (await jobsOf(kubeconfig, namespace, victims[0])).length > 0,
    );
    await sleep(1000);
    const running = await Promise.all(
      victims.map(async (id) => (await api.call(`/crews/halves/status/${id}`)).body.status as string),
    );
    expect(running).toContain("running");
    const killedAt = Date.now();
    expect(await b.kill("SIGKILL")).toBeNull();

    const takenAfterMs = await waitFor(
      "the survivor holds the killed replica's shard Lease",
      async () => (await leaseHolder(victimShard)) === "shard-a" && Date.now() - killedAt,
      30_000,
      100,
    );
    console.log(`shard ${victimShard}'s Lease held by the survivor ${takenAfterMs} ms after the SIGKILL`);
    expect(takenAfterMs).toBeLessThan(15_000);
    await waitFor("the survivor reports both shards", async () => (await heldShards(a)).length === 2, 5_000);

    for (const id of ids) {
      const final = await finalStatus(api, "halves", id, 120_000);
      expect(final.status, `${id}: ${JSON.stringify(final)}`).toBe("completed");
      expect(final.result.tasks).toHaveLength(TASKS);
    }
    // Exactly one Job per task, and one result per task (no task was run twice).
    const jobs = await jobsOf(kubeconfig, namespace);
    for (const id of ids) {
      const names = jobs.filter((j) => j.metadata.labels["kubecrew.io/execution"] === id).map((j) => j.metadata.name);
      expect(names.sort()).toEqual(Array.from({ length: TASKS }, (_, i) => `${id}-${i}`));
      // Per task its success `<execution>-<index>` and no failed attempt (`<pod>-failed`); steps aside.
      const results = (await resultsOf(kubeconfig, namespace, id)).map((r) => r.metadata.name as string);
      const outcomes = results.filter((r) => !r.endsWith("-steps"));
      expect(outcomes.sort()).toEqual(Array.from({ length: TASKS }, (_, i) => `${id}-${i}`));
    }
    // Each Job ran one pod to success (no second attempt); the last pods may still be exiting when status completes.
    await waitFor(
      "every Job complete",
      async () => (await jobsOf(kubeconfig, namespace)).every((j) => j.status?.succeeded === 1),
      30_000,
    );
    for (const job of await jobsOf(kubeconfig, namespace)) expect(job.status.failed ?? 0).toBe(0);
    // One crew webhook per execution by delivery id. Resends of one delivery id can only come from the killed
    // replica's shard (a POST answered but not yet recorded when it died); the survivor's own shard has none.
    await waitFor("every crew webhook", async () => new Set(receiver.hooks.map(deliveryOf)).size === ids.length);
    const uids = new Map(await Promise.all(ids.map(async (id) => [await uidOf(id), id] as const)));
    const received = receiver.hooks.map((h) => uids.get(deliveryOf(h).split("/")[0]!)!);
    expect(new Set(received)).toEqual(new Set(ids));
    for (const id of ids.filter((i) => shardOfId.get(i) !== victimShard)) {
      expect(
        received.filter((r) => r === id),
        id,
      ).toHaveLength(1);
    }
  });
});

const deliveryOf = (h: WebhookReceiver["hooks"][number]) => h.headers["x-kubecrew-delivery"] as string;
