import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { quoteToolResults, startLlmFixture, toolCalls, type LlmFixture } from "../support/llm-fixture.ts";
import { crewSuite } from "./support/crew-suite.ts";
import {
  finalStatus,
  jobsOf,
  kickoff,
  resultsOf,
  startClusterApi,
  status,
  waitFor,
  type ClusterApi,
  type Loose,
} from "./support/fixture.ts";
import { hostForPods, installed } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * Approvals of tool calls (issue 32 item 4) on a real control plane: the task's Job ends with its loop parked on the
 * held http_request POST (the conversation on the CrewTaskResult, the wait on the CrewExecution; the target has
 * received nothing), and POST /resume with the call's tool_call_id (an org token: the call acts with no user's account)
 * starts a second Job that makes the call once and completes the task. With a controller of its own: the held call and
 * its approval survive a controller SIGKILLed and an API restarted, and the call is still made exactly once.
 */
const kubeconfig = inject("kubeconfig");
let llm: LlmFixture;
let target: http.Server;
let targetHost: string;
const received: { method: string; body: string }[] = [];

const suite = crewSuite(kubeconfig, {
  prefix: "approvals",
  before: async () => {
    const host = hostForPods();
    llm = await startLlmFixture(host);
    target = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ method: req.method!, body: Buffer.concat(chunks).toString("utf8") });
        res.writeHead(201, { "content-type": "text/plain" }).end("stored");
      });
    });
    await new Promise<void>((resolve) => target.listen(0, host, resolve));
    targetHost = `${host}:${(target.address() as AddressInfo).port}`;
  },
  after: async () => {
    await llm?.stop();
    target?.close();
  },
  crews: () => [heldPost()],
});

function heldPost() {
  return `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: held-post }
spec:
  llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llm.baseURL}" }
  toolPolicy: { allowedHosts: ["${targetHost}"], requireApproval: ["http_request:POST"] }
  agents: [{ name: poster, role: Poster, goal: Post, tools: [http_request], maxIter: 5 }]
  tasks: [{ name: post, agent: poster, description: Post the note, expectedOutput: What the server said }]
  runner: { retries: 0 }
`;
}

/** The model's turn POSTing `body` to the target (the call held), then its turn quoting the call's result. */
function scriptPost(body: string) {
  llm.enqueue(
    toolCalls({
      name: "http_request",
      input: { method: "POST", url: `http://${targetHost}/notes`, headers: { Authorization: "Bearer x1" }, body },
    }),
    quoteToolResults(),
  );
}

/** The call `id` holds, once /status lists it. */
const heldCall = (api: ClusterApi, id: string) =>
  waitFor(
    `execution ${id} holding a call`,
    async () => {
      const s: Loose = await status(api, "held-post", id);
      return (s.pending_tool_calls as Loose[] | undefined)?.[0];
    },
    120_000,
    250,
  );

/** Waits until the execution's only Job, the parked run's, has ended: no pod is held while the call waits. */
const parkedJobEnded = (namespace: string, id: string) =>
  waitFor(
    `the parked task's Job of ${id} ended`,
    async () => {
      const jobs = await jobsOf(kubeconfig, namespace, id);
      return jobs.length === 1 && (jobs[0]!.status.active ?? 0) === 0 ? jobs : undefined;
    },
    60_000,
    250,
  );

describe("a held tool call in task pods", () => {
  it("waits with no pod held and nothing sent; approved, a second Job makes the call once and the task completes", async () => {
    received.length = 0;
    scriptPost("n");
    const id = await kickoff(suite.api, "held-post");
    const held = await heldCall(suite.api, id);
    expect(held).toMatchObject({
      task_id: "post",
      tool: "http_request:POST",
      arguments: { headers: { Authorization: "[redacted]" } },
    });
    const execution = JSON.parse(
      await kubectl(kubeconfig, ["get", "crewexecution", id, "-n", suite.namespace, "-o", "json"]),
    );
    expect(execution.status.phase).toBe("WaitingForInput");
    const parked = (await resultsOf(kubeconfig, suite.namespace, id)).find((r) => r.spec.parked);
    expect(parked.spec.parked.held[0].tool).toBe("http_request:POST");
    // No pod is held: the task's one Job ends (a real container may still be ending when its result is written).
    await parkedJobEnded(suite.namespace, id);
    expect(received).toEqual([]);

    const decided = await suite.api.call(`/crews/held-post/resume`, {
      body: {
        execution_id: id,
        task_id: "post",
        tool_call_id: held.tool_call_id,
        is_approve: true,
        human_feedback: "",
      },
    });
    expect(decided.status).toBe(200);
    const final = await finalStatus(suite.api, "held-post", id, 120_000);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.output).toContain("stored");
    expect(received).toEqual([{ method: "POST", body: "n" }]);
    expect((await jobsOf(kubeconfig, suite.namespace, id)).length).toBe(2);
  });
});

describe.skipIf(installed)("a held call across restarts, with a controller of its own", () => {
  let system: OwnSystem;
  let restarted: ClusterApi | undefined;
  beforeAll(async () => {
    system = await startOwnSystem(kubeconfig, "approvals-restart", {
      crews: [heldPost()],
      controller: { identity: "first" },
      killWith: "SIGKILL",
    });
  });
  afterAll(async () => {
    await restarted?.stop();
    await system?.stop();
  });

  it("survives a controller SIGKILLed and an API restarted: approved while no controller runs, the call is made once", async () => {
    received.length = 0;
    scriptPost("after the restart");
    let current = system.api;
    const id = await kickoff(current, "held-post");
    const held = await heldCall(current, id);
    await parkedJobEnded(system.namespace, id);

    // The controller dies while the call waits; the API restarts; the approval comes while no controller runs.
    await system.controllers.at(-1)!.kill("SIGKILL");
    await current.stop();
    restarted = current = await startClusterApi(kubeconfig, system.namespace);
    expect((await status(current, "held-post", id)).pending_tool_calls).toEqual([held]);
    const ask = { execution_id: id, task_id: "post", tool_call_id: held.tool_call_id, human_feedback: "" };
    expect((await current.call(`/crews/held-post/resume`, { body: { ...ask, is_approve: true } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    expect(received).toEqual([]); // nothing acts on it until a controller runs again
    expect(await jobsOf(kubeconfig, system.namespace, id)).toHaveLength(1);

    await system.startController({ identity: "after-kill" });
    const final = await finalStatus(current, "held-post", id, 120_000);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.output).toContain("stored");
    expect(received).toEqual([{ method: "POST", body: "after the restart" }]);
    // Decided once, made once: a second decision is refused, and two Jobs ran, the parked one and its resumption.
    expect((await current.call(`/crews/held-post/resume`, { body: { ...ask, is_approve: true } })).status).toBe(400);
    const jobs = await jobsOf(kubeconfig, system.namespace, id);
    expect(jobs.map((j) => j.metadata.name).sort()).toEqual([`${id}-0`, `${id}-0-r1`]);
    await waitFor(
      "every Job complete",
      async () => (await jobsOf(kubeconfig, system.namespace, id)).every((j) => j.status?.succeeded === 1),
      30_000,
    );
    expect(received).toHaveLength(1);
  });
});
