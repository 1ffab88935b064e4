import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { crewYaml, startTestDev, tokens, waitFor } from "../../support/dev-server.ts";

let dev: RunningDev;
beforeAll(async () => {
  dev = await startTestDev({
    "slow.yaml": crewYaml("slow", "sleep-1500", { tasks: 3 }),
    "failing.yaml": crewYaml("failing", "fail", { tasks: 2, retries: 1 }),
    "hanging.yaml": crewYaml("hanging", "sleep-60000", { tasks: 1, taskTimeout: 2 }),
  });
});
afterAll(() => dev?.stop());

const call = (path: string, token: string | undefined, init: RequestInit = {}) =>
  fetch(dev.url + path, {
    ...init,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers as Record<string, string>) },
  });
const kickoff = (path: string, token: string, body: unknown) =>
  call(path, token, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
async function kickoffId(path: string, token: string, body: unknown): Promise<string> {
  const res = await kickoff(path, token, body);
  expect(res.status).toBe(200);
  const { kickoff_id } = (await res.json()) as { kickoff_id: string };
  return kickoff_id;
}
const statusOf = async (path: string, token = tokens.org) =>
  (await (await call(path, token)).json()) as Record<string, unknown>;

describe("the crew API on the embedded default", () => {
  it("lists the crew's inputs", async () => {
    const res = await call("/inputs", tokens.org);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ inputs: ["topic"] });
  });

  it("runs a kickoff through running to completed with every task's output, agent and time", async () => {
    const id = await kickoffId("/crews/slow/kickoff", tokens.org, { inputs: { topic: "tides" } });
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    const running = await statusOf(`/crews/slow/status/${id}`);
    expect(running).toEqual({
      status: "running",
      state: "RUNNING",
      current_task: "step1",
      progress: { completed_tasks: 0, total_tasks: 3 },
    });
    const second = await waitFor(async () => {
      const s = await statusOf(`/crews/slow/status/${id}`);
      return s.current_task === "step2" ? s : undefined;
    });
    expect(second.progress).toEqual({ completed_tasks: 1, total_tasks: 3 });

    const done = await waitFor(async () => {
      const s = await statusOf(`/crews/slow/${id}/status`);
      return s.status === "completed" ? s : undefined;
    });
    const result = done.result as { output: string; tasks: Array<Record<string, unknown>> };
    expect(done.state).toBe("SUCCESS");
    // usage: the tokens the (mock) model reported, additive to CrewAI's shape.
    expect(Object.keys(done).sort()).toEqual(["execution_time", "result", "state", "status", "usage"]);
    expect(result.tasks.map((t) => t.task_id)).toEqual(["step1", "step2", "step3"]);
    for (const task of result.tasks) {
      // CrewAI's four fields, plus kubecrew's step count and tools used (one LLM turn, no tools here).
      expect(Object.keys(task).sort()).toEqual([
        "agent",
        "execution_time",
        "output",
        "steps",
        "task_id",
        "tools_used",
        "usage",
      ]);
      expect(task.steps).toBe(1);
      expect(task.tools_used).toEqual([]);
      expect(task.agent).toBe("tides Writer");
      expect(task.output).toContain("[mock llm]");
      expect(task.execution_time).toBeGreaterThanOrEqual(1.4);
    }
    expect(result.output).toBe(result.tasks[2]!.output);
    expect(done.execution_time).toBeGreaterThanOrEqual(4.5);
  }, 60_000);

  it("answers the documented 404 for unknown and malformed ids", async () => {
    for (const id of ["8d6f1e44-3b0c-4a4e-9a51-7a2f6a0e9c11", "not-a-uuid"]) {
      const res = await call(`/status/${id}`, tokens.org);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: "Execution not found", message: `No execution found with ID: ${id}` });
    }
  });

  it("rejects a kickoff with missing inputs with 422 listing every missing name", async () => {
    const res = await kickoff("/kickoff", tokens.org, { inputs: {} });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      error: "Unprocessable Entity",
      message: "Missing required inputs: topic",
      details: { missing_inputs: ["topic"] },
    });
  });

  it("answers 401 with the documented body without a token or with a wrong one", async () => {
    for (const token of [undefined, "kco_wrong"]) {
      const res = await call("/inputs", token);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "Unauthorized", message: "Invalid or missing bearer token" });
    }
    const res = await call("/inputs", tokens.other);
    expect(res.status).toBe(401);
  });

  it("shows a user only the executions that user started; the org token sees them all", async () => {
    const id = await kickoffId("/kickoff", tokens.alice, { inputs: { topic: "owls" } });
    expect((await call(`/status/${id}`, tokens.alice)).status).toBe(200);
    const hidden = await call(`/status/${id}`, tokens.bob);
    expect(hidden.status).toBe(404);
    expect(await hidden.json()).toEqual({ error: "Execution not found", message: `No execution found with ID: ${id}` });
    expect((await call(`/status/${id}`, tokens.org)).status).toBe(200);
    expect((await call(`/stop/${id}`, tokens.bob, { method: "POST" })).status).toBe(404);
  });

  it("answers 400 for malformed JSON and for wrong types, naming the fields", async () => {
    const malformed = await call("/kickoff", tokens.org, {
      method: "POST",
      body: '{"inputs": {',
      headers: { "content-type": "application/json" },
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ error: "Bad Request", message: "Request body is not valid JSON" });

    const wrong = await kickoff("/kickoff", tokens.org, { inputs: "tides", crewWebhookUrl: 42 });
    expect(wrong.status).toBe(400);
    const body = (await wrong.json()) as { error: string; details: Array<{ field: string }> };
    expect(body.error).toBe("Bad Request");
    expect(body.details.map((d) => d.field).sort()).toEqual(["crewWebhookUrl", "inputs"]);
  });

  it("accepts inputs of every JSON type and renders objects as JSON in the prompt", async () => {
    const id = await kickoffId("/kickoff", tokens.org, { inputs: { topic: { name: "tides", depth: 3 } } });
    const done = await waitFor(async () => {
      const s = await statusOf(`/status/${id}`);
      return s.status === "completed" ? s : undefined;
    });
    const tasks = (done.result as { tasks: Array<{ agent: string }> }).tasks;
    expect(tasks[0]!.agent).toBe('{"name":"tides","depth":3} Senior Data Researcher');
  }, 60_000);

  it("answers 413 above the 1 MiB body limit", async () => {
    const res = await kickoff("/kickoff", tokens.org, { inputs: { topic: "x".repeat(1024 * 1024 + 10) } });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe("Payload Too Large");
  });

  it("serves every crew under /crews/{crew} and 404s an unknown crew", async () => {
    expect(await (await call("/crews/research/inputs", tokens.org)).json()).toEqual({ inputs: ["topic"] });
    const res = await call("/crews/nope/inputs", tokens.org);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "Crew not found", message: 'No crew named "nope"' });
  });

  it("gives the error shape carrying the runner's own message when a task fails after its retries", async () => {
    const id = await kickoffId("/crews/failing/kickoff", tokens.org, { inputs: { topic: "x" } });
    const done = await waitFor(async () => {
      const s = await statusOf(`/crews/failing/status/${id}`);
      return s.status === "error" ? s : undefined;
    });
    expect(done).toEqual({
      status: "error",
      state: "FAILED",
      error: 'Task "step1" failed: LLM call to mock/fail failed: mock llm: failure requested',
      execution_time: expect.any(Number),
    });
  }, 60_000);

  it("stops a running execution; stopping it again is a 400", async () => {
    const id = await kickoffId("/crews/slow/kickoff", tokens.org, { inputs: { topic: "x" } });
    const stop = await call(`/crews/slow/stop/${id}`, tokens.org, { method: "POST" });
    expect(stop.status).toBe(200);
    expect(await stop.json()).toEqual({ kickoff_id: id, status: "stopping" });
    const done = await waitFor(async () => {
      const s = await statusOf(`/crews/slow/status/${id}`);
      return s.status === "error" ? s : undefined;
    });
    expect(done.error).toBe("Execution stopped");
    const again = await call(`/crews/slow/stop/${id}`, tokens.org, { method: "POST" });
    expect(again.status).toBe(400);
  });

  it("ends a task that runs past its timeout with the error shape naming the task", async () => {
    const id = await kickoffId("/crews/hanging/kickoff", tokens.org, { inputs: { topic: "x" } });
    const done = await waitFor(async () => {
      const s = await statusOf(`/crews/hanging/status/${id}`);
      return s.status === "error" ? s : undefined;
    });
    expect(done.error).toBe('Task "step1" timed out after 2s');
    expect(done.execution_time).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it("publishes an OpenAPI 3.1 document generated from the schemas", async () => {
    const res = await fetch(`${dev.url}/openapi.json`);
    const doc = (await res.json()) as { openapi: string; info: { version: string }; paths: Record<string, unknown> };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/inputs",
        "/kickoff",
        "/status/{kickoff_id}",
        "/{kickoff_id}/status",
        "/crews/{crew}/kickoff",
      ]),
    );
  });
});
