import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../core/logger.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { crewYaml, startTestDev, tokens, waitFor } from "../../support/dev-server.ts";

/** Kickoff idempotency in `kubecrew dev`: a retried kickoff with the same Idempotency-Key starts no second run. */
const logLines: Array<{ msg?: string; execution?: string; task?: string }> = [];
let dev: RunningDev;
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) logLines.push(JSON.parse(line));
      done();
    },
  });
  dev = await startTestDev(
    { "slow.yaml": crewYaml("slow", "sleep-300", { tasks: 2 }) },
    { log: createLogger({ level: "info" }, sink) },
  );
});
afterAll(() => dev?.stop());

function kickoff(token: string, body: string, key?: string, crew = "slow") {
  return fetch(`${dev.url}/crews/${crew}/kickoff`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      ...(key !== undefined ? { "idempotency-key": key } : {}),
    },
    body,
  });
}
async function kickoffId(token: string, body: string, key?: string, crew = "slow") {
  const res = await kickoff(token, body, key, crew);
  expect(res.status).toBe(200);
  const answer = {
    id: ((await res.json()) as { kickoff_id: string }).kickoff_id,
    replayed: res.headers.get("idempotent-replayed"),
  };
  answered.add(answer.id);
  return answer;
}
/** Every kickoff_id a kickoff answered 200 with: a run that is not among them was started by a refused request. */
const answered = new Set<string>();
const unanswered = async () => {
  await new Promise((r) => setTimeout(r, 500));
  return [...new Set(logLines.filter((l) => l.msg === "Task started").map((l) => l.execution!))].filter(
    (id) => !answered.has(id),
  );
};
const runsStarted = (id: string) => logLines.filter((l) => l.msg === "Task started" && l.execution === id).length;
const startedRuns = () => new Set(logLines.filter((l) => l.msg === "Task started").map((l) => l.execution)).size;
const finished = (id: string) =>
  waitFor(async () => {
    const res = await fetch(`${dev.url}/crews/slow/status/${id}`, {
      headers: { authorization: `Bearer ${tokens.org}` },
    });
    const body = (await res.json()) as { status: string };
    return body.status === "running" ? undefined : body;
  }, 60_000); // two runner processes one after the other: a minute on a machine under load 25

describe("Idempotency-Key on kickoff (kubecrew dev)", () => {
  it("answers a retry (same key, same body in another key order) with the first kickoff_id and runs once", async () => {
    const key = "8e03978e-40d5-43e8-bc93-6894a57f9324";
    const first = await kickoffId(tokens.alice, '{"inputs":{"topic":"tides","depth":2},"meta":{"a":1}}', key);
    expect(first.replayed).toBeNull();
    const retry = await kickoffId(tokens.alice, '{ "meta": {"a": 1}, "inputs": {"depth": 2, "topic": "tides"} }', key);
    expect(retry).toEqual({ id: first.id, replayed: "true" });
    // The Structured Field form of the same key is the same key.
    expect(
      (await kickoffId(tokens.alice, '{"inputs":{"topic":"tides","depth":2},"meta":{"a":1}}', `"${key}"`)).id,
    ).toBe(first.id);
    expect(await finished(first.id)).toMatchObject({ status: "completed" });
    // A retry after the run finished still answers it, and starts nothing.
    const late = await kickoffId(tokens.alice, '{"inputs":{"topic":"tides","depth":2},"meta":{"a":1}}', key);
    expect(late.id).toBe(first.id);
    await new Promise((r) => setTimeout(r, 300));
    expect(runsStarted(first.id)).toBe(2); // step1 and step2, once each
  }, 90_000);

  it("starts one run for concurrent kickoffs with the same key", async () => {
    const before = startedRuns();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => kickoffId(tokens.org, '{"inputs":{"topic":"race"}}', "race-key-1")),
    );
    const ids = new Set(answers.map((a) => a.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.replayed === null)).toHaveLength(1);
    await finished([...ids][0]!);
    expect(startedRuns()).toBe(before + 1);
  }, 90_000);

  it("answers 422 with the documented body for the same key with a different body, and starts nothing", async () => {
    const { id } = await kickoffId(tokens.alice, '{"inputs":{"topic":"moss"}}', "reuse-key");
    const res = await kickoff(tokens.alice, '{"inputs":{"topic":"lichen"}}', "reuse-key");
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      error: "Unprocessable Entity",
      message:
        "This Idempotency-Key was used within the last 24 hours for a kickoff with a different body; " +
        "send a new key for a new kickoff",
      details: { idempotency_key: "reused with a different request body" },
    });
    await finished(id);
    expect(await unanswered()).toEqual([]);
  }, 90_000);

  it("keeps keys apart per caller and per crew, and without a key every kickoff is a new run", async () => {
    const body = '{"inputs":{"topic":"kelp"}}';
    const alice = await kickoffId(tokens.alice, body, "shared-key");
    const bob = await kickoffId(tokens.bob, body, "shared-key");
    const org = await kickoffId(tokens.org, body, "shared-key");
    const otherCrew = await kickoffId(tokens.alice, body, "shared-key", "research");
    expect(new Set([alice.id, bob.id, org.id, otherCrew.id]).size).toBe(4);
    const a = await kickoffId(tokens.alice, body);
    const b = await kickoffId(tokens.alice, body);
    expect(a.id).not.toBe(b.id);
  });

  it("refuses a malformed key with 400 naming the header, and starts nothing", async () => {
    for (const [key, problem] of [
      ["", "Idempotency-Key is empty"],
      ["k".repeat(256), "Idempotency-Key is longer than 255 characters"],
      ["one, two", "Idempotency-Key may hold only visible ASCII characters (no spaces, one key)"],
      ['"a"b"', "Idempotency-Key is not a valid quoted string"],
    ] as const) {
      const res = await kickoff(tokens.org, '{"inputs":{"topic":"x"}}', key);
      expect(res.status, key).toBe(400);
      expect(await res.json()).toEqual({
        error: "Bad Request",
        message: `Invalid kickoff request: ${problem}`,
        details: [{ field: "Idempotency-Key", message: problem }],
      });
    }
    expect(await unanswered()).toEqual([]);
  });
});
