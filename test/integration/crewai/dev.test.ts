import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { crewaiPrompts, crewaiPython, fillPrompt } from "../../support/crewai.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { answer, callTools, startLlmFixture, type LlmFixture } from "../../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../../support/mcp-servers.ts";

// `kubecrew dev` running crews on the crewai runtime: each task a runner process whose child is the real CrewAI
// (the virtual environment kubecrew dev prepares on first use, hack/crewai-venv.sh), against the OpenAI-compatible
// fixture. The contract test runs one crew on both runtimes and compares what the API shows of them.
let dev: RunningDev;
let llm: LlmFixture;
let mcp: FixtureMcpServer;
let site: Server;
let siteHost: string;

const head = (name: string, runtime: string) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  runtime: ${runtime}
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: llama3, baseURL: "${llm.baseURL}" }
  runner: { retries: 0, taskTimeoutSeconds: 300 }
`;

const sequential = () => `${head("crewai-pair", "crewai")}  agents:
    - { name: researcher, role: "{topic} Researcher", goal: "Find facts about {topic}", backstory: "Reads a lot." }
    - { name: writer, role: "{topic} Writer", goal: "Write about {topic}", backstory: "Writes well." }
  tasks:
    - { name: research, agent: researcher, description: "Research {topic}", expectedOutput: "Facts" }
    - { name: write, agent: writer, description: "Write about {topic}", expectedOutput: "An article" }
`;

const reviewed = () => `${head("crewai-review", "crewai")}  agents:
    - { name: writer, role: "{topic} Writer", goal: "Write about {topic}", backstory: "Writes well." }
  tasks:
    - { name: draft, agent: writer, description: "Draft a note on {topic}", expectedOutput: "A note", humanInput: true }
`;

const withTools = (name: string, runtime: string) => `${head(name, runtime)}  mcpServers:
    - { name: kb, url: "${mcp.url}", tools: [lookup] }
  toolPolicy: { allowedHosts: ["${siteHost}", "169.254.169.254"] }
  agents:
    - { name: scout, role: Scout, goal: "Find facts about {topic}", tools: [http_request], mcps: [kb], maxIter: 5 }
  tasks:
    - { name: look, agent: scout, description: "Look up {topic}", expectedOutput: "Facts" }
`;

beforeAll(async () => {
  crewaiPython(); // the environment exists (npm test's set-up); kubecrew dev finds it itself
  [llm, mcp] = await Promise.all([startLlmFixture(), startFixtureMcpServer()]);
  site = createServer((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("the site's answer"));
  await new Promise<void>((done) => site.listen(0, "127.0.0.1", done));
  siteHost = `127.0.0.1:${(site.address() as AddressInfo).port}`;
  const env = { ...process.env };
  delete env.KUBECREW_CREWAI_PYTHON;
  dev = await startTestDev(
    {
      "pair.yaml": sequential(),
      "review.yaml": reviewed(),
      "tools-crewai.yaml": withTools("tools-crewai", "crewai"),
      "tools-kubecrew.yaml": withTools("tools-kubecrew", "kubecrew"),
    },
    { runnerEnv: env },
  );
}, 120_000);
afterAll(async () => {
  await dev?.stop();
  await Promise.all([llm?.stop(), mcp?.stop()]);
  await new Promise<void>((done) => site?.close(() => done()));
});

interface Status {
  status: string;
  error?: string;
  result?: { output: string; tasks: { task_id: string; output: string; tools_used?: string[] }[] };
}

const auth = { authorization: `Bearer ${tokens.org}` };

async function kickoff(crew: string): Promise<string> {
  const res = await fetch(`${dev.url}/crews/${crew}/kickoff`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic: "tides" } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { kickoff_id: string }).kickoff_id;
}

const status = async (crew: string, id: string) =>
  (await (await fetch(`${dev.url}/crews/${crew}/status/${id}`, { headers: auth })).json()) as Status;

const finished = (crew: string, id: string, ms = 200_000) =>
  waitFor(async () => {
    const s = await status(crew, id);
    return s.status === "running" ? undefined : s;
  }, ms);

interface Frame {
  event: string;
  data: Record<string, unknown>;
}

/** The execution's event stream, read to its end (it closes after the final event). */
async function events(crew: string, id: string): Promise<Frame[]> {
  const text = await (await fetch(`${dev.url}/crews/${crew}/status/${id}/events`, { headers: auth })).text();
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("id: "))
    .map((block) => {
      const field = (name: string) =>
        block
          .split("\n")
          .find((l) => l.startsWith(`${name}: `))!
          .slice(name.length + 2);
      return { event: field("event"), data: JSON.parse(field("data")) as Record<string, unknown> };
    });
}

/** A JSON value's shape: its keys (recursively) and the types of its leaves, not their values. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.length ? [shape(value[0])] : [];
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, shape(v)]),
    );
  }
  return typeof value;
}

/** PIDs of the CrewAI adapters whose runner works on execution `id` (its assignment's path names the execution). */
function adapterPids(id: string): number[] {
  const cmdline = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
    } catch {
      return "";
    }
  };
  const parent = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]!;
    } catch {
      return "";
    }
  };
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p) && cmdline(p).includes("-m kubecrew_crewai") && cmdline(parent(p)).includes(id))
    .map(Number);
}

describe("kubecrew dev on the crewai runtime", { timeout: 300_000 }, () => {
  it("runs a two-task sequential crew with CrewAI, the first task's output reaching the second as its context", async () => {
    const from = llm.requests.length;
    llm.enqueue(answer("Tides follow the moon."), answer("An article on tides."));
    const id = await kickoff("crewai-pair");
    const final = await finished("crewai-pair", id);
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    expect(final.result!.output).toBe("An article on tides.");
    expect(final.result!.tasks.map((t) => [t.task_id, t.output])).toEqual([
      ["research", "Tides follow the moon."],
      ["write", "An article on tides."],
    ]);
    const [first, second] = llm.requests.slice(from).map((r) => r.body.messages as { content: string }[]);
    const slices = crewaiPrompts(crewaiPython()).slices!;
    expect(first![0]!.content).toBe(
      fillPrompt(slices.role_playing!, {
        role: "tides Researcher",
        backstory: "Reads a lot.",
        goal: "Find facts about tides",
      }),
    );
    expect(first![1]!.content).not.toContain("Tides follow the moon.");
    expect(second![1]!.content).toContain(
      fillPrompt(slices.task_with_context!, { task: "", context: "Tides follow the moon." }).trim(),
    );
  });

  it("gives an MCP tool and http_request to CrewAI; a refused URL fails its call with the policy's message", async () => {
    llm.enqueue(callTools());
    const id = await kickoff("tools-crewai");
    const final = await finished("tools-crewai", id);
    expect(final.status).toBe("completed");
    const frames = await events("tools-crewai", id);
    const steps = frames.filter((f) => f.event === "step").map((f) => f.data.step as Record<string, string>);
    expect(steps.find((s) => s.tool?.includes("lookup"))?.output).toContain("value of");
    expect(steps.find((s) => s.tool === "http_request")).toBeDefined();
    // The fixture's call-tools reply asks http_request for a URL the tool's schema allows; the refused address is
    // asked for explicitly below.
    llm.enqueue(
      {
        kind: "tool-calls",
        calls: [{ name: "http_request", input: { method: "GET", url: "http://169.254.169.254/" } }],
      },
      answer("done"),
    );
    const refusedId = await kickoff("tools-crewai");
    await finished("tools-crewai", refusedId);
    const refused = (await events("tools-crewai", refusedId))
      .filter((f) => f.event === "step")
      .map((f) => f.data.step as Record<string, string>)
      .find((s) => s.tool === "http_request");
    expect(refused?.error).toContain(
      "refused by the outbound URL policy: 169.254.169.254 is a cloud metadata address; calls to it are refused",
    );
  });

  it("steps and events have the same shapes on both runtimes (one contract)", async () => {
    const frames: Record<string, Frame[]> = {};
    for (const crew of ["tools-kubecrew", "tools-crewai"]) {
      llm.enqueue(
        { kind: "tool-calls", calls: [{ name: "http_request", input: { method: "GET", url: `http://${siteHost}/` } }] },
        answer("Facts about tides."),
      );
      const id = await kickoff(crew);
      expect((await finished(crew, id)).status).toBe("completed");
      frames[crew] = await events(crew, id);
    }
    const kubecrew = frames["tools-kubecrew"]!;
    const crewai = frames["tools-crewai"]!;
    expect(crewai.map((f) => f.event)).toEqual(kubecrew.map((f) => f.event));
    expect(crewai.map((f) => shape(f.data))).toEqual(kubecrew.map((f) => shape(f.data)));
  });

  it("a humanInput task waits for a person; sent back, CrewAI continues from its answer with the feedback", async () => {
    llm.requests.length = 0;
    llm.enqueue(answer("A first draft about tides."));
    const id = await kickoff("crewai-review");
    const pending = () =>
      waitFor(async () => {
        const s = (await status("crewai-review", id)) as Status & { pending_human_input?: { output: string } };
        return s.pending_human_input;
      }, 200_000);
    expect(await pending()).toMatchObject({ output: "A first draft about tides." });
    llm.enqueue(answer("Tides: short."));
    const resume = (approve: boolean, feedback: string) =>
      fetch(`${dev.url}/crews/crewai-review/resume`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ execution_id: id, task_id: "draft", human_feedback: feedback, is_approve: approve }),
      });
    expect((await resume(false, "Shorter.")).status).toBe(200);
    await waitFor(async () => ((await pending()).output === "Tides: short." ? true : undefined), 200_000);
    // The revision's request: CrewAI's own messages, then the answer the person saw and CrewAI's feedback message.
    const messages = llm.requests.at(-1)!.body.messages as { role: string; content: string }[];
    const slices = crewaiPrompts(crewaiPython()).slices!;
    expect(messages.slice(-2)).toEqual([
      { role: "assistant", content: "A first draft about tides." },
      { role: "user", content: fillPrompt(slices.feedback_instructions!, { feedback: "Shorter." }) },
    ]);
    expect((await resume(true, "")).status).toBe(200);
    const final = await finished("crewai-review", id);
    expect(final).toMatchObject({ status: "completed", result: { output: "Tides: short." } });
    expect(llm.requests).toHaveLength(2);
  });

  it("stops a running task: the CrewAI process ends within the grace period", async () => {
    const from = llm.requests.length;
    llm.enqueue(answer("too late", undefined, 120_000));
    const id = await kickoff("crewai-pair");
    await waitFor(async () => (llm.requests.length > from ? true : undefined), 200_000);
    const pids = adapterPids(id);
    expect(pids.length).toBe(1);
    const res = await fetch(`${dev.url}/crews/crewai-pair/stop/${id}`, { method: "POST", headers: auth });
    expect(res.status).toBeLessThan(300);
    const stopped = performance.now();
    await waitFor(async () => (adapterPids(id).length === 0 ? true : undefined), 10_000);
    expect(performance.now() - stopped).toBeLessThan(5_000);
    expect((await status("crewai-pair", id)).status).toBe("error");
  });
});
