import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LlmConfig } from "../../../core/crew.ts";
import { localPolicy } from "../../../core/outbound/policy.ts";
import { taskStep, type TaskStep } from "../../../core/task-step.ts";
import { runCrewaiTask } from "../../../runner/crewai-runtime.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import { crewaiPrompts, crewaiPython, fillPrompt } from "../../support/crewai.ts";
import {
  answer,
  callTools,
  startLlmFixture,
  toolCalls,
  toolsOffered,
  type LlmFixture,
} from "../../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../../support/mcp-servers.ts";

// The crewai runtime's bridge with the real CrewAI package (hack/crewai-venv.sh) in its child process, against the
// OpenAI-compatible fixture: the requests it sees are CrewAI's own.
const SECRET = "sk-crewai-runtime-secret-0123456789";
let python: string;
let llm: LlmFixture;
let site: Server;
let siteHost: string;

beforeAll(async () => {
  python = crewaiPython();
  llm = await startLlmFixture();
  site = createServer((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("the site's answer"));
  await new Promise<void>((done) => site.listen(0, "127.0.0.1", done));
  siteHost = `127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await llm?.stop();
  await new Promise<void>((done) => site?.close(() => done()));
});
beforeEach(() => {
  llm.requests.length = 0;
});

const compatible = (): LlmConfig => ({ provider: "openai-compatible", model: "llama3", baseURL: llm.baseURL });

function logSink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString("utf8"));
      done();
    },
  });
  return { logger: pino({ level: "debug" }, stream), text: () => lines.join("") };
}

function run(assignment: ReturnType<typeof testAssignment>, extra: Partial<Parameters<typeof runCrewaiTask>[1]> = {}) {
  const steps: TaskStep[] = [];
  const log = logSink();
  const outcome = runCrewaiTask(
    { ...assignment, runtime: "crewai" },
    {
      python,
      env: { PATH: process.env.PATH, KUBECREW_OPENAI_COMPATIBLE_API_KEY: SECRET },
      policy: localPolicy,
      logger: log.logger,
      onStep: (step) => steps.push(step),
      ...extra,
    },
  );
  return { outcome, steps, log };
}

// `import crewai` alone takes seconds; on a busy machine a task takes tens of them.
describe("the crewai runtime", { timeout: 240_000 }, () => {
  it("runs the task with CrewAI: its system prompt, the earlier output as its context, steps and tokens", async () => {
    llm.enqueue(answer("Agents act on their own.", { inputTokens: 40, outputTokens: 5 }));
    const assignment = testAssignment({ llm: compatible() });
    const { outcome, steps } = run(assignment);
    const result = await outcome;
    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({
      taskName: "write",
      taskIndex: 1,
      agent: "Senior Writer",
      output: "Agents act on their own.",
      model: "openai-compatible/llama3",
      tokenUsage: { inputTokens: 40, outputTokens: 5, totalTokens: 45 },
      stepCount: 1,
    });
    // CrewAI's prompts, read from the installed package: the request is CrewAI's, not kubecrew's.
    const slices = crewaiPrompts(python).slices!;
    const messages = llm.requests[0]!.body.messages as { role: string; content: string }[];
    const { agent } = assignment;
    expect(messages[0]).toEqual({
      role: "system",
      content: fillPrompt(slices.role_playing!, { role: agent.role, backstory: agent.backstory, goal: agent.goal }),
    });
    expect(messages[1]!.content).toContain(
      fillPrompt(slices.task_with_context!, { task: "", context: "Agents plan, act and observe." }).trim(),
    );
    expect(llm.requests[0]!.headers["user-agent"]).toMatch(/^OpenAI\/Python /);
    expect(steps.map((s) => taskStep.parse(s))).toEqual(result.steps);
    expect(steps[0]).toMatchObject({ index: 0, kind: "llm", output: "Agents act on their own." });
  });

  it("a revision a person asked for: CrewAI's human-input hook gets the earlier answer and the feedback, no console", async () => {
    // Issue 32: kubecrew's wait answers CrewAI's human input; the task runs again told what the person said.
    llm.enqueue(answer("Agents act, briefly."));
    const base = testAssignment({ llm: compatible() });
    const review = { previousOutput: "Agents are programs that act on their own, at length.", feedback: "Shorter." };
    const { outcome } = run({ ...base, task: { ...base.task, revision: 1, review } });
    const result = await outcome;
    expect(result).toMatchObject({ output: "Agents act, briefly." });
    expect(llm.requests).toHaveLength(1);
    const messages = llm.requests[0]!.body.messages as { role: string; content: string }[];
    // After CrewAI's own system and task messages: the answer the person saw, then CrewAI's feedback message.
    const slices = crewaiPrompts(python).slices!;
    expect(messages.slice(2)).toEqual([
      { role: "assistant", content: review.previousOutput },
      { role: "user", content: fillPrompt(slices.feedback_instructions!, { feedback: "Shorter." }) },
    ]);
  });

  it("never lets the API key reach a step, a log line or the outcome", async () => {
    llm.enqueue(answer(`The key I was given is ${SECRET}.`));
    const { outcome, steps, log } = run(testAssignment({ llm: compatible() }));
    const result = await outcome;
    expect(llm.requests[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(result.output).toBe("The key I was given is [redacted].");
    expect(JSON.stringify(result) + JSON.stringify(steps) + log.text()).not.toContain(SECRET);
  });

  it("calls an MCP server's tools through CrewAI's MCP support, and http_request", async () => {
    const mcp: FixtureMcpServer = await startFixtureMcpServer();
    try {
      // Every offered tool called (with made-up arguments), then http_request to the site, then the answer.
      llm.enqueue(
        callTools(),
        toolCalls({ name: "http_request", input: { method: "GET", url: `http://${siteHost}/` } }),
        answer("Done."),
      );
      const base = testAssignment({ llm: compatible() });
      const assignment = {
        ...base,
        agent: { ...base.agent, tools: ["http_request" as const] },
        tools: {
          mcpServers: [
            {
              name: "fixture",
              url: mcp.url,
              transport: "streamable-http" as const,
              headers: [{ name: "Authorization", value: "Bearer mcp-header-secret" }],
              tools: ["lookup"],
              timeoutSeconds: 10,
            },
          ],
          allowedHosts: [siteHost],
        },
      };
      const { outcome, steps } = run(assignment);
      const result = await outcome;
      expect(result.error).toBeUndefined();
      const offered = toolsOffered(llm.requests[0]!.body).map((t) => t.name);
      expect(offered).toContain("http_request");
      expect(offered.filter((n) => n.includes("lookup"))).toHaveLength(1);
      expect(offered.some((n) => n.includes("broken"))).toBe(false);
      const tools = steps.filter((s) => s.kind === "tool");
      expect(tools.find((s) => s.tool!.includes("lookup"))?.output).toContain("value of");
      const requests = tools.filter((s) => s.tool === "http_request");
      expect(requests.map((s) => s.output).join("\n")).toContain("the site's answer");
      expect(mcp.requests.some((h) => h.authorization === "Bearer mcp-header-secret")).toBe(true);
      expect(JSON.stringify(result)).not.toContain("mcp-header-secret");
    } finally {
      await mcp.stop();
    }
  });

  it("fails a call the outbound URL policy refuses with the policy's message", async () => {
    llm.enqueue(toolCalls({ name: "http_request", input: { method: "GET", url: "http://169.254.169.254/" } }));
    const base = testAssignment({ llm: compatible() });
    const assignment = {
      ...base,
      context: [],
      agent: { ...base.agent, tools: ["http_request" as const] },
      tools: { mcpServers: [], allowedHosts: ["169.254.169.254"] },
    };
    const { outcome, steps } = run(assignment);
    await outcome;
    const refused = steps.find((s) => s.tool === "http_request");
    expect(refused?.error).toContain(
      "refused by the outbound URL policy: 169.254.169.254 is a cloud metadata address; calls to it are refused",
    );
  });

  it("fails the task when the model's own address is refused", async () => {
    const result = await run(
      testAssignment({ llm: { provider: "openai-compatible", model: "m", baseURL: "http://169.254.169.254/v1" } }),
    ).outcome;
    expect(result.error).toContain("169.254.169.254 is a cloud metadata address");
  });

  it("ends the child on stop (SIGTERM, then SIGKILL after the grace period) and reports the interruption", async () => {
    llm.enqueue(answer("late", undefined, 60_000));
    const stop = new AbortController();
    const started = performance.now();
    const { outcome } = run(testAssignment({ llm: compatible() }), { signal: stop.signal, graceMs: 2_000 });
    // Stop once CrewAI has called the model (the request is in the fixture).
    while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 100));
    const stopped = performance.now();
    stop.abort(new Error("Task interrupted by SIGTERM"));
    const result = await outcome;
    expect(result.error).toBe("Task interrupted by SIGTERM");
    expect(performance.now() - stopped).toBeLessThan(4_000);
    expect(performance.now() - started).toBeLessThan(60_000);
  });

  it("names the setting when the Python has no CrewAI", async () => {
    const result = await run(testAssignment({ llm: compatible() }), { python: "/usr/bin/python3" }).outcome;
    expect(result.error).toMatch(/has no (kubecrew_crewai|crewai) module: set KUBECREW_CREWAI_PYTHON/);
  });
});
