import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../../dev/config.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { crewaiPython } from "../../support/crewai.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";

const auth = { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" };

/** CrewAI's own example flow, read from the installed package (never copied into this repository). */
function crewaiExampleFlow(): string {
  const path = execFileSync(
    crewaiPython(),
    [
      "-c",
      "import crewai.flow, os; print(os.path.join(os.path.dirname(crewai.flow.__file__), 'templates', 'flow_definition_example.yaml'))",
    ],
    { encoding: "utf8" },
  ).trim();
  return readFileSync(path, "utf8");
}

describe("kubecrew dev runs declarative flows", () => {
  let dev: RunningDev;
  // Answers read field by field, as a client would.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  type Body = Record<string, any>;
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${dev.url}${path}`, { ...init, headers: { ...auth, ...(init.headers ?? {}) } });
    return { status: res.status, body: (await res.json()) as Body };
  };
  const status = (flow: string, id: string) => call(`/flows/${flow}/status/${id}`);

  beforeAll(async () => {
    dev = await startTestDev(
      {
        "review-flow.yaml": readFileSync(join(repoRoot, "examples/review-flow.yaml"), "utf8"),
        "crewai-example-flow.yaml": crewaiExampleFlow(),
        // A person answers every human_feedback here (test/integration/flows/mock-feedback.test.ts: the mock's answer).
      },
      { env: { KUBECREW_MOCK_FEEDBACK_SECONDS: "0" } },
    );
  }, 60_000);
  afterAll(() => dev?.stop());

  it("lists the flows with the inputs of their state schema", async () => {
    const { body } = await call("/flows");
    expect(body.flows.map((f: { name: string }) => f.name)).toEqual(["article-review-flow", "research-review-flow"]);
    expect((await call("/flows/article-review-flow/inputs")).body).toEqual({ inputs: ["topic", "sections"] });
  });

  it("answers 422 naming missing and invalid inputs", async () => {
    const missing = await call("/flows/article-review-flow/kickoff", {
      method: "POST",
      body: JSON.stringify({ inputs: {} }),
    });
    expect(missing.status).toBe(422);
    expect(missing.body.details).toMatchObject({ missing_inputs: ["topic"], invalid_inputs: [] });
    const invalid = await call("/flows/article-review-flow/kickoff", {
      method: "POST",
      body: JSON.stringify({ inputs: { topic: "x", sections: "not a list" } }),
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.details.invalid_inputs).toEqual(["/sections must be array"]);
  });

  it("runs ours through an each, an and join and a router, waits for a person, and publishes on approval", async () => {
    const kickoff = await call("/flows/article-review-flow/kickoff", {
      method: "POST",
      body: JSON.stringify({ inputs: { topic: "tide pools" } }),
    });
    expect(kickoff.status).toBe(200);
    const id = kickoff.body.kickoff_id as string;
    const waiting = await waitFor(async () => {
      const s = (await status("article-review-flow", id)).body;
      return s.state === "PENDING_HUMAN_INPUT" ? s : undefined;
    }, 150_000);
    expect(waiting).toMatchObject({
      status: "running",
      current_task: "review",
      human_feedback: { emit: ["approved", "rejected"] },
    });
    // outline, research, draft_sections, assemble, check_length; review waits.
    expect(waiting.progress.completed_tasks).toBe(5);

    const resumed = await call("/flows/article-review-flow/resume", {
      method: "POST",
      body: JSON.stringify({ execution_id: id, task_id: "review", human_feedback: "Approved, ship it." }),
    });
    expect(resumed.body).toMatchObject({ status: "resumed", outcome: "approved" });
    const done = await waitFor(async () => {
      const s = (await status("article-review-flow", id)).body;
      return s.status === "completed" ? s : undefined;
    }, 60_000);
    const order = done.result.tasks.map((t: { task_id: string }) => t.task_id);
    expect(new Set(order.slice(0, 3))).toEqual(new Set(["outline", "research", "draft_sections"]));
    expect(order.slice(3)).toEqual(["assemble", "check_length", "review", "publish"]);
    expect(done.result.outcomes).toEqual([
      { method: "check_length", outcome: "long_enough" },
      { method: "review", outcome: "approved" },
    ]);
    expect(done.result.outputs.draft_sections).toHaveLength(3);
    expect(done.result.outputs.review).toMatchObject({ feedback: "Approved, ship it.", outcome: "approved" });
    expect(done.result.output).toMatch(/^published: \[mock llm\]/);

    const events = await fetch(`${dev.url}/flows/article-review-flow/status/${id}/events`, { headers: auth });
    const text = await events.text();
    const started = [...text.matchAll(/event: method_started\ndata: (.*)/g)].map((m) => JSON.parse(m[1]!).method);
    expect(started.slice(3)).toEqual(["assemble", "check_length", "review", "publish"]);
    expect(text).toMatch(/event: human_feedback_requested/);
    expect(text.trim().split("\n").at(-1)).toMatch(/"phase":"Succeeded"/);
  }, 240_000);

  it("takes the default outcome on empty feedback and refuses a resume when nothing waits", async () => {
    const { body } = await call("/flows/article-review-flow/kickoff", {
      method: "POST",
      body: JSON.stringify({ inputs: { topic: "moss", sections: ["one"] } }),
    });
    const id = body.kickoff_id as string;
    const early = await call("/flows/article-review-flow/resume", {
      method: "POST",
      body: JSON.stringify({ execution_id: id, human_feedback: "" }),
    });
    expect(early.status).toBe(409);
    await waitFor(
      async () => ((await status("article-review-flow", id)).body.state === "PENDING_HUMAN_INPUT" ? true : undefined),
      150_000,
    );
    const rejected = await call("/flows/article-review-flow/resume", {
      method: "POST",
      body: JSON.stringify({ execution_id: id, human_feedback: "rejected: too vague" }),
    });
    expect(rejected.body.outcome).toBe("rejected");
    const done = await waitFor(async () => {
      const s = (await status("article-review-flow", id)).body;
      return s.status === "completed" ? s : undefined;
    }, 60_000);
    expect(done.result.output).toBe("discarded: rejected: too vague");
  }, 240_000);

  it("stops a run mid-flow: the error says so and the join after it never starts", async () => {
    const { body } = await call("/flows/article-review-flow/kickoff", {
      method: "POST",
      body: JSON.stringify({ inputs: { topic: "kelp" } }),
    });
    const id = body.kickoff_id as string;
    const stopped = await call(`/flows/article-review-flow/stop/${id}`, { method: "POST" });
    expect(stopped).toEqual({ status: 200, body: { status: "stopped" } });
    const after = await status("article-review-flow", id);
    expect(after.body).toMatchObject({ status: "error", error: "Execution stopped" });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const events = await (
      await fetch(`${dev.url}/flows/article-review-flow/status/${id}/events`, { headers: auth })
    ).text();
    expect(events).not.toMatch(/"method":"assemble"/);
    expect((await call(`/flows/article-review-flow/stop/${id}`, { method: "POST" })).status).toBe(409);
  }, 60_000);

  it("completes CrewAI's own example flow, its router answered with its first outcome by the mock provider", async () => {
    const { body } = await call("/flows/research-review-flow/kickoff", { method: "POST", body: JSON.stringify({}) });
    const done = await waitFor(async () => {
      const s = (await status("research-review-flow", body.kickoff_id)).body;
      return s.status === "running" ? undefined : s;
    }, 150_000);
    expect(done.status).toBe("completed");
    expect(done.result.tasks.map((t: { task_id: string }) => t.task_id)).toEqual([
      "research_brief",
      "route_followup",
      "write_followup",
    ]);
    expect(done.result.outcomes).toEqual([{ method: "route_followup", outcome: "followup" }]);
    expect(done.result.outputs.research_brief.tasks_output).toHaveLength(2);
  }, 240_000);
});

describe("kubecrew dev refuses flows it cannot run", () => {
  it("names a Python action and a listen that names nothing, with their file", async () => {
    const flow = `schema: crewai.flow/v1
name: PyFlow
methods:
  seed:
    start: true
    do: { call: script, code: "return 1" }
  after:
    listen: sead
    do: { call: expression, expr: "1" }
`;
    await expect(startTestDev({ "py-flow.yaml": flow })).rejects.toThrow(
      /methods\.after\.listen: "sead" names no method/,
    );
    const python = flow.replace("listen: sead", "listen: seed");
    await expect(startTestDev({ "py-flow.yaml": python })).rejects.toThrow(
      /methods\.seed\.do: call: script runs Python, which only the crewai runtime runs/,
    );
    const tool = python.replace(
      '{ call: script, code: "return 1" }',
      "{ call: tool, ref: my_project.tools:SearchTool }",
    );
    await expect(startTestDev({ "py-flow.yaml": tool })).rejects.toThrow(
      /methods\.seed\.do\.ref: "my_project\.tools:SearchTool" is a Python tool class, which only the crewai runtime runs/,
    );
  });
});
