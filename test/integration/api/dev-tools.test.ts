import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { repoRoot } from "../../../dev/config.ts";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import {
  quoteToolResults,
  startLlmFixture,
  toolCalls,
  toolResultsSent,
  type LlmFixture,
} from "../../support/llm-fixture.ts";
import {
  startEverythingServer,
  startFixtureMcpServer,
  type FixtureMcpServer,
  type RunningServer,
} from "../../support/mcp-servers.ts";

// `kubecrew dev` end to end: crews whose agent uses MCP tools (the npm everything server, an SDK-built server with a
// Secret header) and http_request complete, and the result carries the tools' outputs.
let dev: RunningDev;
let llm: LlmFixture;
let everything: RunningServer;
let kb: FixtureMcpServer;
let weather: Server;
let weatherHost: string;
/** Step webhooks the weather server received at /steps, in arrival order. */
const stepPosts: {
  kickoff_id: string;
  task_id: string;
  attempt: number;
  step: { index: number; kind: string; tool?: string };
  delivery?: string;
  event?: string;
}[] = [];

function crew(name: string, llmYaml: string) {
  return `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: ${llmYaml}
  mcpServers:
    - { name: everything, url: "${everything.url}", tools: [echo] }
    - name: kb
      url: "${kb.url}"
      headers:
        - { name: Authorization, valueFrom: { secretKeyRef: { name: kb-token, key: token } } }
  toolPolicy: { allowedHosts: ["${weatherHost}"] }
  agents:
    - name: scout
      role: Scout
      goal: Find facts about {topic}
      mcps: ["everything#echo", "kb#lookup"]
      tools: [http_request]
      maxIter: 5
  tasks:
    - { name: look, agent: scout, description: "Look up {topic}", expectedOutput: "Facts" }
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;
}

beforeAll(async () => {
  [llm, everything, kb] = await Promise.all([
    startLlmFixture(),
    startEverythingServer("streamableHttp"),
    startFixtureMcpServer(),
  ]);
  weather = createServer((req, res) => {
    if (req.method === "POST" && req.url === "/steps") {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        stepPosts.push({
          ...(JSON.parse(Buffer.concat(chunks).toString("utf8")) as (typeof stepPosts)[number]),
          delivery: req.headers["x-kubecrew-delivery"] as string,
          event: req.headers["x-kubecrew-event"] as string,
        });
        res.writeHead(204).end();
      });
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ city: req.url, sky: "clear" }));
  });
  await new Promise<void>((resolve) => weather.listen(0, "127.0.0.1", resolve));
  weatherHost = `127.0.0.1:${(weather.address() as AddressInfo).port}`;
  dev = await startTestDev(
    {
      "scripted.yaml": crew("scripted", `{ provider: openai-compatible, model: m, baseURL: "${llm.baseURL}" }`),
      "mock.yaml": crew("mock-tools", "{ provider: mock, model: call-tools }"),
      "live.yaml": crew("live", `{ provider: openai-compatible, model: m, baseURL: "${llm.baseURL}" }`).replace(
        'mcps: ["everything#echo", "kb#lookup"]',
        'mcps: ["kb#lookup", "kb#slow"]',
      ),
      // The example as shipped, pointed at this test's everything server.
      "tools-crew.yaml": readFileSync(join(repoRoot, "examples/tools-crew.yaml"), "utf8").replace(
        "http://127.0.0.1:3001/mcp",
        everything.url,
      ),
    },
    {
      env: { KUBECREW_LLM_MODEL: "call-tools" },
      runnerEnv: { ...process.env, KUBECREW_SECRET_KB_TOKEN_TOKEN: "Bearer kb-s3cret" },
    },
  );
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  weather?.closeAllConnections();
  await new Promise((resolve) => weather?.close(resolve));
  await Promise.all([llm?.stop(), everything?.stop(), kb?.stop()]);
});

interface Done {
  status: string;
  result?: { output: string; tasks: { steps?: number; tools_used?: string[] }[] };
}

async function run(crewName: string, extra: Record<string, unknown> = {}): Promise<Done> {
  const res = await fetch(`${dev.url}/crews/${crewName}/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic: "tides" }, ...extra }),
  });
  expect(res.status).toBe(200);
  const { kickoff_id } = (await res.json()) as { kickoff_id: string };
  return waitFor(async () => {
    const s = (await (
      await fetch(`${dev.url}/crews/${crewName}/status/${kickoff_id}`, {
        headers: { authorization: `Bearer ${tokens.org}` },
      })
    ).json()) as Done & { error?: string };
    if (s.status === "error") throw new Error(`execution failed: ${s.error}`);
    return s.status === "completed" ? s : undefined;
  });
}

describe("kubecrew dev with tools", () => {
  it("completes a crew whose agent calls an MCP tool and http_request; the output holds their results", async () => {
    llm.enqueue(
      toolCalls(
        { name: "echo", input: { message: "hello from dev" } },
        { name: "lookup", input: { key: "tides" } },
        { name: "http_request", input: { method: "GET", url: `http://${weatherHost}/oslo` } },
      ),
      quoteToolResults(),
    );
    const done = await run("scripted");
    expect(done.result!.output).toContain("Tool echo returned: Echo: hello from dev");
    expect(done.result!.output).toContain("Tool lookup returned: value of tides");
    expect(done.result!.output).toContain(
      'Tool http_request returned: HTTP 200 OK\ncontent-type: application/json\n\n{"city":"/oslo","sky":"clear"}',
    );
    expect(toolResultsSent(llm.requests.at(-1)!.body).map((r) => r.name)).toEqual(["echo", "lookup", "http_request"]);
    expect(kb.requests.at(-1)!.authorization).toBe("Bearer kb-s3cret");
    // Steps: the turn calling three tools, the three calls, the answering turn.
    const [task] = done.result!.tasks;
    expect(task!.steps).toBe(5);
    expect([...task!.tools_used!].sort()).toEqual(["echo", "http_request", "lookup"]);
    expect(JSON.stringify(done)).not.toContain("kb-s3cret");
  }, 60_000);

  it("runs the call-tools test model against the same tools", async () => {
    const done = await run("mock-tools");
    expect(done.result!.output).toContain("Tool echo returned: Echo: x");
    expect(done.result!.output).toContain("Tool lookup returned: value of x");
    expect(done.result!.output).toContain('Tool http_request returned: Tool error: "x" is not an absolute URL');
  }, 60_000);

  it("runs examples/tools-crew.yaml with the call-tools model", async () => {
    const done = await run("tools");
    expect(done.result!.output).toContain("Tool echo returned: Echo: x");
    expect(done.result!.output).toContain("Tool get-sum returned: The sum of 0 and 0 is 0.");
    expect(done.result!.tasks[0]!.steps).toBe(5);
  }, 60_000);

  it("POSTs each step once to stepWebhookUrl, in order", async () => {
    stepPosts.length = 0;
    const done = await run("mock-tools", { stepWebhookUrl: `http://${weatherHost}/steps` });
    const count = done.result!.tasks[0]!.steps!;
    expect(count).toBe(5); // a turn calling echo, lookup and http_request; the three calls; the answer
    await waitFor(async () => (stepPosts.length >= count ? true : undefined), 10_000);
    await new Promise((r) => setTimeout(r, 300)); // nothing more arrives
    expect(stepPosts.map((p) => [p.task_id, p.attempt, p.step.index])).toEqual(
      [0, 1, 2, 3, 4].map((i) => ["look", 1, i]),
    );
    expect(stepPosts.map((p) => p.step.kind)).toEqual(["llm", "tool", "tool", "tool", "llm"]);
    // The delivery id receivers dedupe on, as a cluster's controller sends it (the run's id standing for its uid).
    expect(stepPosts.map((p) => [p.delivery, p.event])).toEqual(
      [0, 1, 2, 3, 4].map((i) => [`${stepPosts[0]!.kickoff_id}/step:look:1:${i}`, "step"]),
    );
    expect(
      stepPosts
        .slice(1, 4)
        .map((p) => p.step.tool)
        .sort(),
    ).toEqual(["echo", "http_request", "lookup"]);
  }, 60_000);

  describe("the event stream", () => {
    interface Frame {
      id: number;
      event: string;
      data: Record<string, unknown>;
    }
    const parse = (text: string): Frame[] =>
      text
        .split("\n\n")
        .filter((block) => block.startsWith("id: "))
        .map((block) => {
          const field = (name: string) =>
            block
              .split("\n")
              .find((l) => l.startsWith(`${name}: `))!
              .slice(name.length + 2);
          return {
            id: Number(field("id")),
            event: field("event"),
            data: JSON.parse(field("data")) as Record<string, unknown>,
          };
        });
    const kick = async (token: string) => {
      const res = await fetch(`${dev.url}/crews/mock-tools/kickoff`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ inputs: { topic: "tides" } }),
      });
      return ((await res.json()) as { kickoff_id: string }).kickoff_id;
    };
    const stream = (id: string, token: string, headers: Record<string, string> = {}) =>
      fetch(`${dev.url}/crews/mock-tools/status/${id}/events`, {
        headers: { authorization: `Bearer ${token}`, ...headers },
      });

    it("streams task, step and final events in order from kickoff, then closes; resumes after Last-Event-ID", async () => {
      const id = await kick(tokens.alice);
      const res = await stream(id, tokens.alice);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const frames = parse(await res.text()); // ends when the execution's final event was sent
      expect(frames.map((f) => f.event)).toEqual([
        "task_started",
        "step",
        "step",
        "step",
        "step",
        "step",
        "task_completed",
        "execution_completed",
      ]);
      expect(frames.map((f) => f.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(frames.every((f) => f.data.kickoff_id === id)).toBe(true);
      expect(frames.slice(1, 6).map((f) => (f.data.step as { index: number }).index)).toEqual([0, 1, 2, 3, 4]);
      expect(frames[6]!.data).toMatchObject({ task_id: "look", steps: 5 });
      expect(frames[7]!.data.output).toContain("Tool echo returned: Echo: x");

      const resumed = parse(await (await stream(id, tokens.alice, { "last-event-id": "5" })).text());
      expect(resumed.map((f) => f.id)).toEqual([6, 7, 8]);
      expect(resumed).toEqual(frames.slice(5));
    }, 60_000);

    it("answers 404 to another user's token and 401 without one, as /status does", async () => {
      const id = await kick(tokens.alice);
      const other = await stream(id, tokens.bob);
      expect(other.status).toBe(404);
      expect(await other.json()).toEqual({
        error: "Execution not found",
        message: `No execution found with ID: ${id}`,
      });
      expect((await fetch(`${dev.url}/crews/mock-tools/status/${id}/events`)).status).toBe(401);
      expect((await stream("8d6f1e44-3b0c-4a4e-9a51-7a2f6a0e9c11", tokens.org)).status).toBe(404);
    });

    it("streams each step as it ends, while the task still runs", async () => {
      llm.enqueue(
        toolCalls({ name: "lookup", input: { key: "tides" } }),
        toolCalls({ name: "slow", input: { delayMs: 4_000 } }),
        quoteToolResults(),
      );
      const res = await fetch(`${dev.url}/crews/live/kickoff`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
        body: JSON.stringify({ inputs: { topic: "tides" } }),
      });
      const { kickoff_id: id } = (await res.json()) as { kickoff_id: string };
      const events = await fetch(`${dev.url}/crews/live/status/${id}/events`, {
        headers: { authorization: `Bearer ${tokens.org}` },
      });
      const reader = events.body!.getReader();
      let text = "";
      // Read until the lookup call's step (index 1) has arrived; the slow tool keeps the task running for 4 s more.
      while (!parse(text).some((f) => f.event === "step" && (f.data.step as { index: number }).index === 1)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      const status = (await (
        await fetch(`${dev.url}/crews/live/status/${id}`, { headers: { authorization: `Bearer ${tokens.org}` } })
      ).json()) as { status: string };
      expect(status.status).toBe("running");
      const early = parse(text).map((f) => f.event);
      expect(early.slice(0, 3)).toEqual(["task_started", "step", "step"]);
      expect(early).not.toContain("task_completed");
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      const frames = parse(text);
      expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => i + 1));
      expect(frames.map((f) => f.event)).toEqual([
        "task_started",
        "step",
        "step",
        "step",
        "step",
        "step",
        "task_completed",
        "execution_completed",
      ]);
    }, 60_000);
  });
});
