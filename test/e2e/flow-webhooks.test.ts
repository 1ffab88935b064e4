import { createHmac } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { crewSuite } from "./support/crew-suite.ts";
import { sleep, startControllerProcess, waitFor, type Loose } from "./support/fixture.ts";
import { flowManifest } from "./support/flow-manifests.ts";
import { hostForPods, installed } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";
import { startWebhookReceiver, type ReceivedHook, type WebhookReceiver } from "./support/webhook-receiver.ts";

/**
 * Issue 33: a flow kickoff's webhooks on a real control plane. The controller POSTs taskWebhookUrl once per method run
 * that completed, stepWebhookUrl once per agent step of a method run's child executions and crewWebhookUrl once when
 * the run ended, signed with the flow's key (`<flow>-flow-webhook`, made
 * by the controller and owned by the Flow), retried on a 503, and records each delivery on the FlowExecution, so a
 * controller started after a SIGKILL sends none again.
 */
const kubeconfig = inject("kubeconfig");
let receiver: WebhookReceiver;

const suite = crewSuite(kubeconfig, {
  prefix: "flowhooks",
  before: async () => {
    receiver = await startWebhookReceiver(hostForPods());
  },
  after: async () => receiver?.close(),
  crews: () => [],
});

const document = {
  schema: "crewai.flow/v1",
  name: "HookFlow",
  state: { type: "json_schema", json_schema: { type: "object", properties: { topic: { type: "string" } } } },
  methods: {
    prepare: { start: true, do: { call: "expression", expr: "'notes on ' + state.topic" } },
    route: {
      listen: "prepare",
      router: true,
      emit: ["long", "short"],
      do: { call: "expression", expr: "size(outputs.prepare) > 3 ? 'long' : 'short'" },
    },
    finish: { listen: "long", do: { call: "expression", expr: "'done: ' + outputs.prepare" } },
  },
};

const WEBHOOKS_ANNOTATION = "kubecrew.io/webhook-deliveries";

async function get(kind: string, name: string): Promise<Loose> {
  return JSON.parse(await kubectl(kubeconfig, ["get", kind, name, "-n", suite.namespace, "-o", "json"]));
}

const hooksOf = (id: string) => receiver.hooks.filter((h) => (JSON.parse(h.body) as Loose).kickoff_id === id);

const verifies = (hook: ReceivedHook, key: string) =>
  hook.headers["x-kubecrew-signature"] ===
  "sha256=" + createHmac("sha256", key).update(`${hook.headers["x-kubecrew-timestamp"]}.${hook.body}`).digest("hex");

describe("flow webhooks on the cluster", () => {
  it("sends each method and the run's end, signed with the flow's generated key, once across a controller kill", async () => {
    await suite.applyCrew(flowManifest("hooks", document, { provider: "mock", model: "mock" }));
    const secret = await waitFor("the flow's signing Secret", async () => {
      const list = JSON.parse(
        await kubectl(kubeconfig, ["get", "secrets", "-n", suite.namespace, "-o", "json"]),
      ) as Loose;
      return list.items.find((s: Loose) => s.metadata.name === "hooks-flow-webhook");
    });
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "Flow", name: "hooks", controller: true }),
    ]);
    const key = Buffer.from(secret.data.secret as string, "base64").toString("utf8");
    await waitFor("flow served", async () => {
      const res = await suite.api.call("/flows");
      return res.body.flows?.length ? true : undefined;
    });

    receiver.failNext = 1; // the first delivery is answered 503 and retried
    const kickoff = await suite.api.call("/flows/hooks/kickoff", {
      body: {
        inputs: { topic: "tides" },
        meta: { ticket: 9 },
        taskWebhookUrl: `${receiver.url}/method`,
        crewWebhookUrl: `${receiver.url}/flow`,
      },
    });
    expect(kickoff.status, JSON.stringify(kickoff.body)).toBe(200);
    const id = kickoff.body.kickoff_id as string;
    const run = await waitFor(
      "every delivery recorded on the run",
      async () => {
        const object = await get("flowexecution", id);
        const records = JSON.parse(object.metadata.annotations?.[WEBHOOKS_ANNOTATION] ?? "{}") as Loose;
        return Object.keys(records).length === 4 ? object : undefined;
      },
      60_000,
      250,
    );
    expect(JSON.parse(run.metadata.annotations[WEBHOOKS_ANNOTATION])).toEqual({
      "method:prepare#1": "delivered",
      "method:route#1": "delivered",
      "method:finish#1": "delivered",
      flow: "delivered",
    });
    const hooks = hooksOf(id);
    const bodies = hooks.map((h) => ({ path: h.path, event: h.headers["x-kubecrew-event"], body: JSON.parse(h.body) }));
    expect(
      bodies
        .filter((b) => b.path === "/method")
        .map((b) => b.body.method)
        .sort(),
    ).toEqual(["finish", "prepare", "route"]);
    expect(bodies.find((b) => b.body.method === "route")).toMatchObject({
      event: "method",
      body: { kickoff_id: id, flow: "hooks", task_id: "route", output: "long", outcome: "long", meta: { ticket: 9 } },
    });
    expect(bodies.find((b) => b.path === "/flow")).toMatchObject({
      event: "flow",
      body: {
        kickoff_id: id,
        flow: "hooks",
        status: "completed",
        result: "done: notes on tides",
        outputs: { prepare: "notes on tides", route: "long", finish: "done: notes on tides" },
        error: null,
        meta: { ticket: 9 },
      },
    });
    for (const hook of hooks) expect(verifies(hook, key), hook.path).toBe(true);
    const ids = hooks.map((h) => h.headers["x-kubecrew-delivery"]);
    expect(new Set(ids).size).toBe(4);
    expect(ids).toContain(`${run.metadata.uid}/flow`);

    // The suite's own controller: SIGKILLed and started again, it finds the deliveries recorded and sends none again.
    if (!installed && suite.controller) {
      expect(await suite.controller.kill("SIGKILL")).toBeNull();
      suite.controller = await startControllerProcess(kubeconfig, suite.namespace, { identity: "flowhooks-b" });
      await sleep(3000);
      expect(hooksOf(id)).toHaveLength(4);
    }
  });

  it("sends each agent step of each method run to stepWebhookUrl, as a crew's steps, in order, each once", async () => {
    // An agent method, then an each whose two items are an agent run each: three child executions, each with steps.
    const agents = {
      schema: "crewai.flow/v1",
      name: "StepFlow",
      state: { type: "json_schema", json_schema: { type: "object", properties: { topic: { type: "string" } } } },
      methods: {
        draft: {
          start: true,
          do: {
            call: "agent",
            with: { role: "Drafter", goal: "Draft", backstory: "Quick.", input: "Draft on ${state.topic}" },
          },
        },
        parts: {
          listen: "draft",
          do: {
            call: "each",
            in: "['one', 'two']",
            do: [
              {
                name: "write",
                action: {
                  call: "agent",
                  with: { role: "Writer", goal: "Write", backstory: "Plain.", input: "${item}" },
                },
              },
            ],
          },
        },
      },
    };
    await suite.applyCrew(flowManifest("steps", agents, { provider: "mock", model: "mock" }));
    const secret = await waitFor("the flow's signing Secret", async () => {
      const list = JSON.parse(
        await kubectl(kubeconfig, ["get", "secrets", "-n", suite.namespace, "-o", "json"]),
      ) as Loose;
      return list.items.find((s: Loose) => s.metadata.name === "steps-flow-webhook");
    });
    const key = Buffer.from(secret.data.secret as string, "base64").toString("utf8");
    const kickoff = await waitFor("the flow served and kicked off", async () => {
      const res = await suite.api.call("/flows/steps/kickoff", {
        body: { inputs: { topic: "tides" }, meta: { ticket: 11 }, stepWebhookUrl: `${receiver.url}/step` },
      });
      return res.status === 200 ? res : undefined;
    });
    const id = kickoff.body.kickoff_id as string;
    await waitFor(
      "the run's end",
      async () => {
        const phase = (await get("flowexecution", id)).status?.phase;
        return ["Succeeded", "Failed"].includes(phase) ? phase : undefined;
      },
      180_000,
    );
    expect((await get("flowexecution", id)).status.phase).toBe("Succeeded");

    // The steps the child executions' results hold: what the receiver must get, each once.
    const list = async (kind: string, selector: string) =>
      (
        JSON.parse(
          await kubectl(kubeconfig, ["get", kind, "-n", suite.namespace, "-l", selector, "-o", "json"]),
        ) as Loose
      ).items as Loose[];
    const children = await list("crewexecutions", `kubecrew.io/flow-execution=${id}`);
    expect(children).toHaveLength(3);
    const stored = new Map<string, Loose>();
    for (const child of children) {
      for (const r of await list("crewtaskresults", `kubecrew.io/execution=${child.metadata.name}`)) {
        for (const step of r.spec.steps ?? [])
          stored.set(`${child.metadata.name}:${r.spec.attempt}:${step.index}`, step);
      }
    }
    expect(stored.size).toBeGreaterThanOrEqual(3);
    const steps = await waitFor(
      "every step delivered",
      async () => {
        const got = hooksOf(id).filter((h) => h.path === "/step");
        return new Set(got.map((h) => h.headers["x-kubecrew-delivery"])).size === stored.size ? got : undefined;
      },
      60_000,
      250,
    );
    const bodies = steps.map((h) => JSON.parse(h.body) as Loose);
    expect(new Set(bodies.map((b) => b.method))).toEqual(new Set(["draft", "parts"]));
    for (const [i, body] of bodies.entries()) {
      expect(steps[i]!.headers["x-kubecrew-event"]).toBe("step");
      expect(verifies(steps[i]!, key)).toBe(true);
      // A crew's step webhook (kickoff_id, task_id, attempt, step, meta), the method where a crew has its task.
      expect(body).toEqual({
        kickoff_id: id,
        flow: "steps",
        task_id: body.method,
        method: body.method,
        activation: `${body.method}#1`,
        attempt: expect.any(Number),
        step: expect.objectContaining({ index: expect.any(Number), kind: expect.any(String) }),
        meta: { ticket: 11 },
      });
      const same = [...stored.values()].find(
        (s) => s.startedAt === body.step.started_at && s.index === body.step.index && s.kind === body.step.kind,
      );
      expect(same, JSON.stringify(body.step)).toBeDefined();
    }
    // In order per place (the delivery id names it: step:<method run>:<place>:<attempt>:<index>).
    const places = new Map<string, number[]>();
    for (const h of steps) {
      const [, activation, place, attempt, index] = (h.headers["x-kubecrew-delivery"] as string)
        .split("/")
        .slice(1)
        .join("/")
        .split(":");
      places.set(`${activation}:${place}:${attempt}`, [
        ...(places.get(`${activation}:${place}:${attempt}`) ?? []),
        Number(index),
      ]);
    }
    expect(places.size).toBe(3);
    for (const indexes of places.values()) expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
    const records = JSON.parse((await get("flowexecution", id)).metadata.annotations[WEBHOOKS_ANNOTATION]) as Loose;
    expect(Object.keys(records).filter((k) => k.startsWith("step:"))).toHaveLength(stored.size);
  }, 300_000);

  it("refuses a webhook URL the outbound policy refuses (400, naming the field)", async () => {
    const res = await suite.api.call("/flows/hooks/kickoff", {
      body: { inputs: { topic: "x" }, crewWebhookUrl: "http://169.254.169.254/latest/meta-data/" },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ field: "crewWebhookUrl", message: expect.any(String) }]);
  });
});
