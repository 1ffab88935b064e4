import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, inject, it } from "vitest";
import { quoteToolResults, startLlmFixture, toolCalls, type LlmFixture } from "../support/llm-fixture.ts";
import { crewSuite } from "./support/crew-suite.ts";
import { finalStatus, jobsOf, kickoff, resultsOf, status, waitFor, type Loose } from "./support/fixture.ts";
import { hostForPods } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";

/**
 * Approvals of tool calls (issue 32 item 4) on a real control plane: the task's Job ends with its loop parked on the
 * held http_request POST (the conversation on the CrewTaskResult, the wait on the CrewExecution; the target has
 * received nothing), and POST /resume with the call's tool_call_id starts a second Job that makes the call once and
 * completes the task.
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
  crews: () => [
    `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: held-post }
spec:
  llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llm.baseURL}" }
  toolPolicy: { allowedHosts: ["${targetHost}"], requireApproval: ["http_request:POST"] }
  agents: [{ name: poster, role: Poster, goal: Post, tools: [http_request], maxIter: 5 }]
  tasks: [{ name: post, agent: poster, description: Post the note, expectedOutput: What the server said }]
  runner: { retries: 0 }
`,
  ],
});

describe("a held tool call in task pods", () => {
  it("waits with no pod held and nothing sent; approved, a second Job makes the call once and the task completes", async () => {
    llm.enqueue(
      toolCalls({
        name: "http_request",
        input: {
          method: "POST",
          url: `http://${targetHost}/notes`,
          headers: { Authorization: "Bearer x1" },
          body: "n",
        },
      }),
      quoteToolResults(),
    );
    const id = await kickoff(suite.api, "held-post");
    const held = await waitFor(
      `execution ${id} holding a call`,
      async () => {
        const s: Loose = await status(suite.api, "held-post", id);
        return (s.pending_tool_calls as Loose[] | undefined)?.[0];
      },
      120_000,
      250,
    );
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
    await waitFor(
      `the parked task's Job of ${id} ended`,
      async () => {
        const jobs = await jobsOf(kubeconfig, suite.namespace, id);
        return jobs.length === 1 && (jobs[0]!.status.active ?? 0) === 0 ? jobs : undefined;
      },
      60_000,
      250,
    );
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
