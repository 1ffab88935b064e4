import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import type { TaskAssignment } from "../../../core/task-assignment.ts";
import { buildTaskPrompt } from "../../../runner/prompt.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { answer, startLlmFixture, type LlmFixture, type RecordedRequest } from "../../support/llm-fixture.ts";

// `kubecrew dev` runs CrewAI's task context and asynchronous tasks: two asynchronous tasks as two runner processes at
// once, a third taking both as context after both; the OpenAI-compatible fixture records what each task was told.
let dev: RunningDev;
let llm: LlmFixture;

const crew = (name: string, tasks: string) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: m, baseURL: "${llm.baseURL}" }
  agents:
    - { name: writer, role: Writer, goal: "Write about {topic}" }
  tasks:
${tasks}
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;

beforeAll(async () => {
  llm = await startLlmFixture();
  dev = await startTestDev({
    "parallel.yaml": crew(
      "parallel",
      `    - { name: facts, agent: writer, description: "Collect facts on {topic}", expectedOutput: F, asyncExecution: true }
    - { name: quotes, agent: writer, description: "Collect quotes on {topic}", expectedOutput: Q, asyncExecution: true }
    - { name: draft, agent: writer, description: "Draft on {topic}", expectedOutput: D, context: [facts, quotes] }`,
    ),
    "picky.yaml": crew(
      "picky",
      `    - { name: outline, agent: writer, description: "Outline {topic}", expectedOutput: O }
    - { name: research, agent: writer, description: "Research {topic}", expectedOutput: R }
    - { name: summary, agent: writer, description: "Summarise {topic}", expectedOutput: S, context: [outline] }`,
    ),
  });
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  await llm?.stop();
});

interface Final {
  status: string;
  error?: string;
  result?: { output: string; tasks: { task_id: string; output: string }[] };
}

async function kickoff(crewName: string): Promise<string> {
  const res = await fetch(`${dev.url}/crews/${crewName}/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic: "tides" } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { kickoff_id: string }).kickoff_id;
}

const finished = (crewName: string, id: string) =>
  waitFor(async () => {
    const s = (await (
      await fetch(`${dev.url}/crews/${crewName}/status/${id}`, { headers: { authorization: `Bearer ${tokens.org}` } })
    ).json()) as Final;
    return s.status === "running" ? undefined : s;
  }, 40_000);

/** The runner processes of an execution alive now, by task index (their assignment path is …/<kickoff_id>/<index>/…). */
async function runnersOf(id: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const argv = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    const index = argv.includes("\0runner\0") ? new RegExp(`/${id}/(\\d+)/`).exec(argv)?.[1] : undefined;
    if (index !== undefined) found.push(Number(index));
  }
  return found.sort();
}

/** The user message of a recorded chat completion request. */
const userMessage = (r: RecordedRequest) =>
  ((r.body.messages as { role: string; content: unknown }[]).find((m) => m.role === "user")?.content as string) ?? "";
/**
 * The task message the runner sends for a task of these crews (agent "writer") given exactly `context`: what the
 * recorded request must hold, whatever words the prompt puts around the context.
 */
function promptWith(description: string, expectedOutput: string, context: TaskAssignment["context"]): string {
  const agent = { name: "writer", role: "Writer", goal: "Write about tides", backstory: "" };
  const task = { index: 0, name: "t", description, expectedOutput };
  return buildTaskPrompt({ agent, task, context } as Pick<TaskAssignment, "agent" | "task" | "context">).user;
}
const requestFor = (from: number, description: string) => {
  const found = llm.requests.slice(from).filter((r) => userMessage(r).includes(description));
  expect(found).toHaveLength(1);
  return found[0]!;
};

describe("kubecrew dev with asynchronous tasks and task context", () => {
  it("runs two asynchronous tasks at once, then the task joining them with exactly their two outputs", async () => {
    const from = llm.requests.length;
    // Slow answers, so that the two tasks' runs overlap for certain if they start together.
    llm.enqueue(answer("Answer A about tides.", undefined, 3000), answer("Answer B about tides.", undefined, 3000));
    const id = await kickoff("parallel");
    let most: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const now = await runnersOf(id);
        if (now.length > most.length) most = now;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const final = await finished("parallel", id);
    sampling = false;
    await sampler;
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    // Both asynchronous tasks' processes were alive at the same time.
    expect(most).toEqual([0, 1]);

    const outputs = Object.fromEntries(final.result!.tasks.map((t) => [t.task_id, t.output]));
    expect([outputs.facts, outputs.quotes].sort()).toEqual(["Answer A about tides.", "Answer B about tides."]);
    // The asynchronous tasks had no context; the third was asked after both had answered, with exactly their
    // outputs, in its context list's order.
    const facts = requestFor(from, "Collect facts on tides");
    const quotes = requestFor(from, "Collect quotes on tides");
    const draft = requestFor(from, "Draft on tides");
    expect(userMessage(facts)).toBe(promptWith("Collect facts on tides", "F", []));
    expect(userMessage(quotes)).toBe(promptWith("Collect quotes on tides", "Q", []));
    expect(llm.requests.indexOf(draft)).toBe(from + 2);
    expect(userMessage(draft)).toBe(
      promptWith("Draft on tides", "D", [
        { task: "facts", output: outputs.facts! },
        { task: "quotes", output: outputs.quotes! },
      ]),
    );
  }, 60_000);

  it("gives a task whose context names one earlier task that output only", async () => {
    const from = llm.requests.length;
    llm.enqueue(answer("The outline."), answer("The research."), answer("The summary."));
    const final = await finished("picky", await kickoff("picky"));
    expect(final.status).toBe("completed");
    const outline = [{ task: "outline", output: "The outline." }];
    // A task without a context list gets every earlier output; one with a list, those tasks' only.
    expect(userMessage(requestFor(from, "Research tides"))).toBe(promptWith("Research tides", "R", outline));
    expect(userMessage(requestFor(from, "Summarise tides"))).toBe(promptWith("Summarise tides", "S", outline));
  }, 60_000);
});

describe("kubecrew dev refuses bad task context and asynchronous tasks at start-up", () => {
  const repoRoot = resolve(import.meta.dirname, "../../..");
  let dir: string | undefined;
  afterAll(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

  it("prints one line per problem naming the crew file and the task, and exits with status 1", async () => {
    dir = await mkdtemp(join(tmpdir(), "kubecrew-dag-"));
    const task = (name: string, extra = "") =>
      `    - { name: ${name}, agent: writer, description: "${name}", expectedOutput: "${name}"${extra} }`;
    const bad = crew(
      "bad",
      [
        task("first", ", context: [later]"),
        task("self", ", context: [self]"),
        task("ghost", ", context: [nobody]"),
        task("a", ", asyncExecution: true"),
        task("b", ", asyncExecution: true, context: [a]"),
        task("join"),
        task("x", ", asyncExecution: true"),
        task("later", ", asyncExecution: true"),
      ].join("\n"),
    );
    await writeFile(join(dir, "bad.yaml"), bad);
    const run = await promisify(execFile)(
      join(repoRoot, "node_modules/.bin/node"),
      [join(repoRoot, "cli/main.ts"), "dev"],
      { env: { ...process.env, KUBECREW_CREWS_DIR: dir, PORT: "0", LOG_LEVEL: "warn" }, timeout: 20_000 },
    ).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code: number | null; stdout: string; stderr: string }) => err,
    );
    const where = `kubecrew dev: ${join(dir, "bad.yaml")}: Crew "bad": spec`;
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      `${where}: task "first" takes context from "later", which does not run before it`,
      `${where}: task "self" takes context from itself`,
      `${where}: task "ghost" takes context from "nobody", which is not a task of this crew`,
      `${where}: task "b" is asynchronous and takes context from "a", an asynchronous task that starts with it: make a task between them synchronous, or "b" synchronous`,
      `${where}: the crew ends with 2 asynchronous tasks ("x", "later"): at most one asynchronous task may come last`,
    ]);
    expect(run.stdout).not.toContain("listening");
  }, 30_000);
});
