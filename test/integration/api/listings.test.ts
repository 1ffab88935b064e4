import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens } from "../../support/dev-server.ts";

let dev: RunningDev;
beforeAll(async () => {
  dev = await startTestDev();
});
afterAll(() => dev?.stop());

const get = async (path: string, token?: string) => {
  const res = await fetch(dev.url + path, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const kickoff = async (token: string, topic: string) => {
  const res = await fetch(`${dev.url}/crews/research/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic } }),
  });
  return ((await res.json()) as { kickoff_id: string }).kickoff_id;
};
const ids = (body: Record<string, unknown>) => (body.executions as { kickoff_id: string }[]).map((e) => e.kickoff_id);

describe("the console's lists on the crew API", () => {
  it("GET /crews lists the crews a token may use with their inputs, agents and tasks", async () => {
    const { status, body } = await get("/crews", tokens.org);
    expect(status).toBe(200);
    const crews = body.crews as Array<Record<string, unknown>>;
    expect(crews.map((c) => c.name)).toEqual(["research"]);
    expect(crews[0]).toMatchObject({
      description: "Researches a topic and writes a short report about it.",
      inputs: [{ name: "topic", description: "The subject to research", required: true }],
      agents: [{ name: "researcher" }, { name: "analyst" }],
      tasks: [{ name: "research", agent: "researcher" }, { name: "analysis" }, { name: "report" }],
    });
    expect((await get("/crews", tokens.other)).body).toEqual({ crews: [] });
    expect((await get("/crews")).status).toBe(401);
  });

  it("GET /crews/{crew}/executions lists a user's own executions only, newest first; the org token sees all", async () => {
    const alice = await kickoff(tokens.alice, "a");
    const bob = await kickoff(tokens.bob, "b");
    const alice2 = await kickoff(tokens.alice, "c");

    const mine = await get("/crews/research/executions", tokens.alice);
    expect(mine.status).toBe(200);
    expect(ids(mine.body)).toEqual([alice2, alice]);
    expect(ids((await get("/executions", tokens.bob)).body)).toEqual([bob]);
    const all = (await get("/crews/research/executions", tokens.org)).body;
    expect(ids(all)).toEqual([alice2, bob, alice]);
    const first = (all.executions as Array<Record<string, unknown>>)[2]!;
    expect(first).toMatchObject({
      kickoff_id: alice,
      requested_by: { kind: "user", subject: "alice" },
      progress: { total_tasks: 3 },
    });
    expect(first.status).toMatch(/^(running|completed)$/);
    expect(Date.parse(first.created as string)).toBeGreaterThan(Date.now() - 60_000);

    expect((await get("/crews/research/executions", tokens.other)).status).toBe(401);
    expect((await get("/crews/nope/executions", tokens.org)).status).toBe(404);
  });
});
