import { afterAll, beforeAll, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { answer, startLlmFixture, type LlmFixture } from "../../support/llm-fixture.ts";

// `kubecrew dev` end to end: the tokens OpenAI's API (the LLM fixture) reports for each call reach /status — per task
// and for the execution, priced by KUBECREW_LLM_PRICES — and the event stream's final event.
let dev: RunningDev;
let llm: LlmFixture;

beforeAll(async () => {
  llm = await startLlmFixture();
  const crew = `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: priced }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: priced-model, baseURL: "${llm.baseURL}" }
  agents:
    - { name: writer, role: Writer, goal: "Write about {topic}" }
    - { name: editor, role: Editor, goal: "Edit", llm: { provider: openai-compatible, model: free-model, baseURL: "${llm.baseURL}" } }
  tasks:
    - { name: draft, agent: writer, description: "Draft on {topic}", expectedOutput: "A draft" }
    - { name: polish, agent: writer, description: "Polish it", expectedOutput: "Polished" }
    - { name: check, agent: editor, description: "Check it", expectedOutput: "Checked" }
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;
  dev = await startTestDev(
    { "priced.yaml": crew },
    {
      env: { KUBECREW_LLM_PRICES: JSON.stringify({ "priced-model": { input: 3, output: 15 } }) },
      runnerEnv: { ...process.env, KUBECREW_OUTBOUND_ALLOW_LOOPBACK: "true", OPENAI_API_KEY: "sk-usage-test" },
    },
  );
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  await llm?.stop();
});

async function run(): Promise<{ id: string; status: Record<string, unknown> }> {
  const res = await fetch(`${dev.url}/crews/priced/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic: "tides" } }),
  });
  expect(res.status).toBe(200);
  const { kickoff_id: id } = (await res.json()) as { kickoff_id: string };
  const status = await waitFor(async () => {
    const s = (await (
      await fetch(`${dev.url}/crews/priced/status/${id}`, { headers: { authorization: `Bearer ${tokens.org}` } })
    ).json()) as Record<string, unknown>;
    return s.status === "running" ? undefined : s;
  }, 60_000);
  return { id, status };
}

it("reports each task's tokens and the execution's sum, priced where the model has a price", async () => {
  llm.enqueue(
    answer("Draft.", { inputTokens: 1200, outputTokens: 300 }),
    answer("Polished.", { inputTokens: 800, outputTokens: 200 }),
    answer("Checked.", { inputTokens: 50, outputTokens: 5 }),
  );
  const { id, status } = await run();
  expect(status).toMatchObject({ status: "completed" });
  const tasks = (status.result as { tasks: { task_id: string; usage?: unknown }[] }).tasks;
  expect(tasks.map((t) => [t.task_id, t.usage])).toEqual([
    ["draft", { input_tokens: 1200, output_tokens: 300, total_tokens: 1500, cost_usd: 0.0081 }],
    ["polish", { input_tokens: 800, output_tokens: 200, total_tokens: 1000, cost_usd: 0.0054 }],
    // free-model has no price: tokens, no cost.
    ["check", { input_tokens: 50, output_tokens: 5, total_tokens: 55 }],
  ]);
  // The execution's cost is given only when every model that used tokens has a price.
  expect(status.usage).toEqual({ input_tokens: 2050, output_tokens: 505, total_tokens: 2555 });

  const stream = await fetch(`${dev.url}/crews/priced/status/${id}/events`, {
    headers: { authorization: `Bearer ${tokens.org}` },
  });
  const final = (await stream.text())
    .split("\n\n")
    .filter((frame) => frame.includes("event: execution_completed"))
    .map((frame) => JSON.parse(frame.split("\ndata: ")[1]!) as { usage?: unknown });
  expect(final).toHaveLength(1);
  expect(final[0]!.usage).toEqual(status.usage);
}, 90_000);

it("prices the whole execution when all its models have prices", async () => {
  llm.enqueue(
    answer("Draft.", { inputTokens: 1000, outputTokens: 100 }),
    answer("Polished.", { inputTokens: 1000, outputTokens: 100 }),
    answer("Checked.", { inputTokens: 0, outputTokens: 0 }),
  );
  const { status } = await run();
  expect(status.usage).toEqual({ input_tokens: 2000, output_tokens: 200, total_tokens: 2200, cost_usd: 0.009 });
}, 90_000);
