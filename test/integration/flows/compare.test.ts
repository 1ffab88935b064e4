import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { RunningDev } from "../../../dev/start.ts";
import { crewaiCreatedFlow, crewaiExampleFlow, crewaiRuns, type ReferenceRun } from "../../support/crewai-flow.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { answer, startLlmFixture, type LlmFixture } from "../../support/llm-fixture.ts";
import { runnableCases, type FlowCase } from "./flow-cases.ts";

// Each flow of the table run twice with the same scripted model answers (the OpenAI-compatible fixture): in CrewAI's
// own Flow runtime (the installed package, as `crewai run` loads a declaration) and in `kubecrew dev` through
// /flows/{flow}/; the same methods in the same order, the same router and feedback outcomes, the same outputs.
let dev: RunningDev;
let llm: LlmFixture;
let cases: FlowCase[];
let reference: ReferenceRun[];

const auth = { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" };

/** `ResearchReviewFlow` → `research-review-flow`, as kubecrew names a bare document's flow. */
const served = (c: FlowCase) =>
  String(c.definition.name)
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .toLowerCase();

beforeAll(async () => {
  llm = await startLlmFixture();
  const example = parse(crewaiExampleFlow()) as Record<string, unknown>;
  cases = [
    ...runnableCases,
    {
      name: "CrewAI's own example flow",
      definition: example,
      // The crew's two tasks, the router's agent, the follow-up's agent.
      answers: ["Findings and tradeoffs.", "A review. needs_followup: true", "followup", "The executive follow-up."],
    },
    {
      name: "the flow `crewai create flow --declarative` writes",
      definition: parse(crewaiCreatedFlow("my_flow")) as Record<string, unknown>,
    },
  ];
  // CrewAI first, all cases in one process, the answers queued in the order its runs ask.
  for (const c of cases) llm.enqueue(...[...(c.answers ?? []), ...(c.collapse ?? [])].map((a) => answer(a)));
  reference = await crewaiRuns(cases, llm.baseURL);
  dev = await startTestDev(Object.fromEntries(cases.map((c) => [`${served(c)}.json`, JSON.stringify(c.definition)])), {
    env: {
      KUBECREW_LLM_PROVIDER: "openai-compatible",
      KUBECREW_LLM_MODEL: "gpt-4.1-mini",
      KUBECREW_LLM_BASE_URL: llm.baseURL,
    },
  });
}, 300_000);

afterAll(async () => {
  await dev?.stop();
  await llm?.stop();
});

interface KubecrewRun {
  methods: string[];
  outcomes: { method: string; outcome: string }[];
  outputs: Record<string, unknown>;
  result: unknown;
  error: string | null;
}

async function runInKubecrew(c: FlowCase): Promise<KubecrewRun> {
  llm.enqueue(...(c.answers ?? []).map((a) => answer(a)));
  const base = `${dev.url}/flows/${served(c)}`;
  const kicked = await fetch(`${base}/kickoff`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ inputs: c.inputs ?? {} }),
  });
  expect(kicked.status).toBe(200);
  const { kickoff_id: id } = (await kicked.json()) as { kickoff_id: string };
  const feedback = [...(c.feedback ?? [])];
  let status: Record<string, unknown> = {};
  await waitFor(async () => {
    status = (await (await fetch(`${base}/status/${id}`, { headers: auth })).json()) as Record<string, unknown>;
    if (status.state === "PENDING_HUMAN_INPUT" && feedback.length) {
      const resumed = await fetch(`${base}/resume`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ execution_id: id, human_feedback: feedback.shift() }),
      });
      expect(resumed.status).toBe(200);
    }
    return status.status === "completed" || status.status === "error" ? true : undefined;
  }, 120_000);
  // The event stream ends with the flow: its method_started events are the order the methods ran in.
  const events = await (await fetch(`${base}/status/${id}/events`, { headers: auth })).text();
  const methods = [...events.matchAll(/^event: method_started\ndata: (.*)$/gm)].map(
    (m) => (JSON.parse(m[1]!) as { method: string }).method,
  );
  const result = status.result as
    { output: string; outputs: Record<string, unknown>; outcomes: KubecrewRun["outcomes"] } | undefined;
  return {
    methods,
    outcomes: result?.outcomes ?? [],
    outputs: result?.outputs ?? {},
    result: result?.output,
    error: status.status === "error" ? String(status.error) : null,
  };
}

/** An output as both runtimes can show it: text as it is, an agent's or crew's raw text, a feedback's own fields. */
function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(comparable);
  if (value && typeof value === "object") {
    const v = value as Record<string, unknown>;
    if (typeof v.raw === "string") return v.raw;
    if ("feedback" in v && "outcome" in v)
      return { output: comparable(v.output), feedback: v.feedback, outcome: v.outcome };
    return value;
  }
  return value;
}

/** The outcomes CrewAI's routing methods gave, in order: a router's output text, a human_feedback's outcome. */
function crewaiOutcomes(c: FlowCase, run: ReferenceRun): { method: string; outcome: string }[] {
  const methods = c.definition.methods as Record<string, { router?: boolean; human_feedback?: { emit?: string[] } }>;
  return run.completed
    .filter(({ method }) => methods[method]?.router || methods[method]?.human_feedback?.emit?.length)
    .map(({ method, output }) => {
      const shown = comparable(output);
      const outcome = shown && typeof shown === "object" && "outcome" in shown ? shown.outcome : shown;
      return { method, outcome: String(outcome).trim() };
    });
}

/** What kickoff returned, as the status's `result.output` shows it: text as it is, anything else as JSON. */
function resultText(value: unknown): string {
  const shown = comparable(value);
  return typeof shown === "string" ? shown : shown === null || shown === undefined ? "" : JSON.stringify(shown);
}

describe("a flow in kubecrew dev runs as in CrewAI's own runtime", () => {
  it.each([
    ...runnableCases.map((c, i) => ({ name: c.name, i })),
    { name: "CrewAI's own example flow", i: runnableCases.length },
    { name: "the flow `crewai create flow --declarative` writes", i: runnableCases.length + 1 },
  ])(
    "$name",
    async ({ i }) => {
      const c = cases[i]!;
      const crewai = reference[i]!;
      const kubecrew = await runInKubecrew(c);
      if (!crewai.error) expect(kubecrew.error).toBeNull();
      expect(kubecrew.methods).toEqual(crewai.methods);
      if (crewai.error) {
        // Both stop the flow (max_method_calls); a failed run's status has no outputs to compare.
        expect(kubecrew.error).not.toBeNull();
        return;
      }
      const outputs = (o: Record<string, unknown>) =>
        Object.fromEntries(Object.entries(o).map(([k, v]) => [k, comparable(v)]));
      expect(kubecrew.outcomes).toEqual(crewaiOutcomes(c, crewai));
      expect(outputs(kubecrew.outputs)).toEqual(outputs(crewai.outputs));
      expect(kubecrew.result).toBe(resultText(crewai.result));
    },
    180_000,
  );
});
