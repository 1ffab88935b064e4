import { expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { LocalExecutions } from "./local-executions.ts";

it("answers a keyed kickoff's run for 24 hours, then lets the key start a new one", async () => {
  let now = new Date("2026-11-23T10:00:00Z");
  // No crews: each run fails at once (crew not found) without starting a process; only the bookkeeping matters here.
  const executions = new LocalExecutions({
    crews: [],
    workRoot: "/nonexistent",
    runnerCommand: ["false"],
    runnerEnv: {},
    maxTasks: 1,
    log: silentLogger(),
    webhookFetch: fetch,
    now: () => now,
  });
  const kickoff = (requestHash: string) =>
    executions.createExecution({
      crew: "gone",
      spec: { crewRef: { name: "gone" }, inputs: {}, stop: false },
      idempotency: { keyHash: "key-1", requestHash },
    });
  const first = await kickoff("body-1");
  expect(first.kind).toBe("started");
  now = new Date("2026-11-24T09:59:59Z");
  expect(await kickoff("body-1")).toEqual({ kind: "replayed", id: first.id });
  expect(await kickoff("body-2")).toEqual({ kind: "keyReused", id: first.id });
  now = new Date("2026-11-24T10:00:00Z");
  const next = await kickoff("body-2");
  expect(next.kind).toBe("started");
  expect(next.id).not.toBe(first.id);
  expect(await kickoff("body-2")).toEqual({ kind: "replayed", id: next.id });
  await executions.close();
});
