import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { answer, startLlmFixture, type LlmFixture, type RecordedRequest } from "../../support/llm-fixture.ts";

// `kubecrew dev` end to end through /kickoff and /status: a task with outputJson whose first answer the schema
// refuses, the next task given its object, and an LLM guardrail that fails once; OpenAI's API is the LLM fixture.
const repoRoot = resolve(import.meta.dirname, "../../..");
let dev: RunningDev;
let llm: LlmFixture;

const FACTS_SCHEMA = {
  type: "object",
  properties: { claims: { type: "array", items: { type: "string" }, minItems: 1 }, count: { type: "integer" } },
  required: ["claims", "count"],
  additionalProperties: false,
};
const RULE = "The article cites at least one of the claims.";

const crew = (name: string, provider: string, tasks: string) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: { provider: ${provider}, model: "${provider === "mock" ? "mock" : "test-model"}", baseURL: "${llm.baseURL}" }
  agents:
    - { name: writer, role: Writer, goal: "Write about {topic}" }
  tasks:
${tasks}
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;

const reportTasks = `    - name: facts
      agent: writer
      description: "Collect facts on {topic}"
      expectedOutput: "The claims and how many there are"
      outputJson: ${JSON.stringify(FACTS_SCHEMA)}
    - name: article
      agent: writer
      description: "Write an article on {topic}"
      expectedOutput: "A short article"
      guardrail: "${RULE}"`;

beforeAll(async () => {
  llm = await startLlmFixture();
  dev = await startTestDev(
    {
      "report.yaml": crew("report", "openai", reportTasks),
      "briefing-crew.yaml": readFileSync(join(repoRoot, "examples/briefing-crew.yaml"), "utf8"),
    },
    { runnerEnv: { ...process.env, OPENAI_API_KEY: "sk-test" } },
  );
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  await llm?.stop();
});

interface Final {
  status: string;
  error?: string;
  result?: { output: string; tasks: { task_id: string; output: string; json_dict?: unknown }[] };
}

async function run(crewName: string): Promise<Final & { id: string }> {
  const res = await fetch(`${dev.url}/crews/${crewName}/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic: "tides" } }),
  });
  expect(res.status).toBe(200);
  const id = ((await res.json()) as { kickoff_id: string }).kickoff_id;
  return waitFor(async () => {
    const s = (await (
      await fetch(`${dev.url}/crews/${crewName}/status/${id}`, { headers: { authorization: `Bearer ${tokens.org}` } })
    ).json()) as Final;
    return s.status === "running" ? undefined : { ...s, id };
  }, 40_000);
}

type Message = { role: string; content: string };
const messages = (r: RecordedRequest) => r.body.messages as Message[];
const lastUser = (r: RecordedRequest) => messages(r).findLast((m) => m.role === "user")!.content;

describe("kubecrew dev with outputJson and a guardrail", () => {
  it("retries the answer the schema refuses, reports json_dict, gives the object to the next task, retries the guardrail's failure", async () => {
    const from = llm.requests.length;
    const facts = { claims: ["Tides follow the moon."], count: 1 };
    llm.enqueue(
      answer('{"claims": []}'),
      answer(JSON.stringify(facts)),
      answer("Tides are nice."),
      answer('{"valid": false, "feedback": "No claim is cited."}'),
      answer("Tides follow the moon, as the facts say."),
      answer('{"valid": true, "feedback": ""}'),
    );
    const final = await run("report");
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    const [factsTask, article] = final.result!.tasks;
    expect(factsTask).toMatchObject({ task_id: "facts", json_dict: facts, output: JSON.stringify(facts) });
    expect(article).toMatchObject({ task_id: "article", output: "Tides follow the moon, as the facts say." });
    expect(article!.json_dict).toBeUndefined();
    expect(final.result!.output).toBe("Tides follow the moon, as the facts say.");
    // The event stream's task_completed carries the object too.
    const stream = await fetch(`${dev.url}/crews/report/status/${final.id}/events`, {
      headers: { authorization: `Bearer ${tokens.org}` },
    });
    const completed = (await stream.text())
      .split("\n\n")
      .filter((frame) => frame.includes("event: task_completed"))
      .map((frame) => JSON.parse(frame.split("\ndata: ")[1]!) as { task_id: string; json_dict?: unknown });
    expect(completed.map((e) => [e.task_id, e.json_dict])).toEqual([
      ["facts", facts],
      ["article", undefined],
    ]);

    const requests = llm.requests.slice(from);
    expect(requests).toHaveLength(6);
    // facts: OpenAI's native structured output, and the second request carries what was wrong with the first answer.
    expect(requests[0]!.body.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "facts", schema: FACTS_SCHEMA, strict: false },
    });
    expect(lastUser(requests[1]!)).toContain("/claims must NOT have fewer than 1 items");
    expect(lastUser(requests[1]!)).toContain("must have required property 'count'");
    // article: its context is the object as JSON; the guardrail check sees the answer; the retry the feedback.
    expect(lastUser(requests[2]!)).toContain(`--- Result of "facts" ---\n${JSON.stringify(facts)}`);
    expect(requests[2]!.body.response_format).toBeUndefined();
    expect(lastUser(requests[3]!)).toContain(RULE);
    expect(lastUser(requests[3]!)).toContain("Tides are nice.");
    expect(lastUser(requests[4]!)).toContain("No claim is cited.");
  }, 60_000);

  it("runs the example briefing crew offline with the mock provider: an object made up from the schema, the checks passed", async () => {
    const final = await run("briefing");
    expect(final.error).toBeUndefined();
    expect(final.result!.tasks[0]!.json_dict).toEqual({
      headline: "xxx",
      facts: [{ statement: "xxx", source: "x" }],
    });
    expect(final.result!.tasks[1]!.output).toMatch(/^\[mock llm\] Answer to task "brief"/);
  }, 60_000);
});

describe("kubecrew dev refuses an invalid outputJson or guardrail at start-up", () => {
  let dir: string | undefined;
  afterAll(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

  it("prints one line per problem naming the crew file and the task, and exits with status 1", async () => {
    dir = await mkdtemp(join(tmpdir(), "kubecrew-structured-"));
    const bad = crew(
      "bad",
      "mock",
      `    - { name: one, agent: writer, description: d, expectedOutput: e, outputJson: { type: object, required: title } }
    - { name: two, agent: writer, description: d, expectedOutput: e, outputJson: { type: array } }
    - { name: three, agent: writer, description: d, expectedOutput: e, guardrails: [{ regex: "(" }] }`,
    );
    await writeFile(join(dir, "bad.yaml"), bad);
    const result = await promisify(execFile)(
      join(repoRoot, "node_modules/.bin/node"),
      [join(repoRoot, "cli/main.ts"), "dev"],
      { env: { ...process.env, KUBECREW_CREWS_DIR: dir, PORT: "0", LOG_LEVEL: "warn" }, timeout: 20_000 },
    ).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code: number | null; stdout: string; stderr: string }) => err,
    );
    const where = `kubecrew dev: ${join(dir, "bad.yaml")}: Crew "bad": spec`;
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toEqual([
      `${where}: task "one": outputJson is not a valid JSON Schema: /required must be array`,
      `${where}: task "two": outputJson must describe an object (type: object), as CrewAI's json_dict is one`,
      `${where}: task "three": guardrails[0].regex is not a valid regular expression: Invalid regular expression: /(/: Unterminated group`,
    ]);
  }, 30_000);
});
