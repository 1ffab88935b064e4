import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { kubectl } from "./support/kubectl.ts";
import { crewYaml, finalStatus, kickoff, sleep, waitFor, type ControllerProcess } from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * Step webhooks across controller SIGKILLs. Delivery is at least once; every resend carries the same
 * X-Kubecrew-Delivery (execution uid + step key), so a receiver that drops ids it has seen processes each step once.
 * The receiver here holds one answer while the controller is killed (the POST reached it, the controller never saw
 * the 2xx: it must be resent) and answers another at once and then has the controller killed (the 2xx may or may not
 * have been recorded). The test counts the raw duplicates and checks the deduplicated stream is exactly the steps.
 */
const kubeconfig = inject("kubeconfig");
const SECRET = "chatty-s3cret";
let system: OwnSystem;
let receiver: http.Server;
let receiverUrl: string;
let current: ControllerProcess;

interface Post {
  delivery: string;
  body: { kickoff_id: string; task_id: string; attempt: number; step: { index: number } };
  signed: boolean;
}
const posts: Post[] = [];
/** Called with the n-th POST (from 1); the POST is answered (204) when it resolves. */
let onPost: (n: number) => Promise<void> = async () => {};

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c));
    req.on("end", () => {
      const ts = req.headers["x-kubecrew-timestamp"] as string;
      const signature = "sha256=" + createHmac("sha256", SECRET).update(`${ts}.${raw}`).digest("hex");
      posts.push({
        delivery: req.headers["x-kubecrew-delivery"] as string,
        body: JSON.parse(raw) as Post["body"],
        signed: req.headers["x-kubecrew-signature"] === signature,
      });
      void onPost(posts.length).then(() => {
        if (!res.destroyed) res.writeHead(204).end();
      });
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/step`;
  system = await startOwnSystem(kubeconfig, "stephooks", {
    // call-tools calls http_request (a made-up URL: an error the model is told about): three steps per task.
    crews: [
      crewYaml("chatty", "call-tools", { tasks: 3 }).replace(
        'backstory: "Writes well." }',
        'backstory: "Writes well.", tools: [http_request] }',
      ),
    ],
    killWith: "SIGKILL",
  });
  await kubectl(kubeconfig, [
    "create",
    "secret",
    "generic",
    "chatty-webhook",
    "-n",
    system.namespace,
    `--from-literal=secret=${SECRET}`,
  ]);
  current = await system.startController({ identity: "hooks-a" });
});

afterAll(async () => {
  await system?.stop();
  receiver?.close();
});

async function restart(identity: string): Promise<void> {
  expect(await current.kill("SIGKILL")).toBeNull();
  current = await system.startController({ identity });
}

describe.skipIf(installed)("step webhooks across controller SIGKILLs", () => {
  it("delivers every step; receivers deduplicating on X-Kubecrew-Delivery see each step exactly once", async () => {
    let killed: Promise<void> = Promise.resolve();
    let postsAtLastRestart = Number.POSITIVE_INFINITY;
    onPost = async (n) => {
      if (n === 2) {
        // The second step POST: the controller is SIGKILLed before it gets the answer, so it cannot know it arrived.
        killed = restart("hooks-b");
        await killed;
      } else if (n === 5) {
        // The fifth: answered at once, then the controller is SIGKILLed, racing its record of the delivery. The new
        // controller may send it before the first restart has seen it lead: kill that one, not its predecessor.
        const first = killed;
        killed = Promise.all([first, sleep(5)])
          .then(() => restart("hooks-a"))
          .then(() => {
            postsAtLastRestart = posts.length;
          });
      }
    };
    const id = await kickoff(system.api, "chatty", { stepWebhookUrl: receiverUrl });
    const final = await finalStatus(system.api, "chatty", id, 120_000);
    expect(final.status).toBe("completed");
    await killed;
    const uid = (
      await kubectl(kubeconfig, ["get", "ce", id, "-n", system.namespace, "-o", "jsonpath={.metadata.uid}"])
    ).trim();
    const expected = ["step1", "step2", "step3"].flatMap((task) =>
      [0, 1, 2].map((index) => `${uid}/step:${task}:1:${index}`),
    );
    await waitFor(
      "every step delivered",
      async () => expected.every((d) => posts.some((p) => p.delivery === d)),
      60_000,
    );
    await waitFor("every delivery recorded", async () => {
      const ce = JSON.parse(await kubectl(kubeconfig, ["get", "ce", id, "-n", system.namespace, "-o", "json"]));
      const records = JSON.parse(ce.metadata.annotations?.["kubecrew.io/webhook-deliveries"] ?? "{}");
      return Object.keys(records).filter((k) => k.startsWith("step:")).length === expected.length;
    });
    await sleep(1000); // nothing else arrives

    // What a deduplicating receiver processes: the first POST of each delivery id, in arrival order.
    const seen = new Set<string>();
    const processed = posts.filter((p) => !seen.has(p.delivery) && seen.add(p.delivery));
    expect(processed.map((p) => p.delivery).sort()).toEqual([...expected].sort());
    for (const p of posts) {
      expect(p.signed).toBe(true);
      expect(p.delivery).toBe(`${uid}/step:${p.body.task_id}:${p.body.attempt}:${p.body.step.index}`);
    }
    for (const task of ["step1", "step2", "step3"]) {
      const order = processed.filter((p) => p.body.task_id === task).map((p) => p.body.step.index);
      expect(order).toEqual([0, 1, 2]);
    }
    // Raw duplicates: the POST whose answer the killed controller never saw is sent again (same id) — once more if the
    // second kill also beat the record of that resend (a loaded machine); the one answered just before the second
    // kill is resent only if the kill beat the record.
    const duplicates = posts.length - processed.length;
    const held = posts[1]!.delivery;
    expect(posts.filter((p) => p.delivery === held).length).toBeGreaterThanOrEqual(2);
    expect(duplicates).toBeGreaterThanOrEqual(1);
    // Only a step sent before the last restart can be sent again (how many depends on how the kills race the
    // records on a loaded machine); once the last controller runs, each step is recorded and sent once.
    const firstIndex = new Map<string, number>();
    posts.forEach((p, i) => firstIndex.has(p.delivery) || firstIndex.set(p.delivery, i));
    const resent = new Set(posts.filter((p, i) => firstIndex.get(p.delivery) !== i).map((p) => p.delivery));
    for (const delivery of resent) expect(firstIndex.get(delivery)!).toBeLessThan(postsAtLastRestart);
    console.log(`step webhooks: ${posts.length} POSTs for ${expected.length} steps, ${duplicates} raw duplicates`);
  });
});
