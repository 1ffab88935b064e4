import type { AddressInfo } from "node:net";
import express from "express";
import { describe, expect, it } from "vitest";
import type { ExecutionView } from "../execution-backend.ts";
import { ExecutionChanges } from "../execution-changes.ts";
import { streamExecutionEvents } from "./event-stream.ts";

const running: ExecutionView = {
  id: "0b7e8a52-5d6c-4f1e-9a3b-2c1d0e9f8a7b",
  crew: "c",
  spec: { crewRef: { name: "c" }, inputs: {}, stop: false },
  status: { phase: "Running", tasks: [{ name: "t", phase: "Running", startTime: "2026-01-01T00:00:00Z" }] },
  results: {},
};

describe("streamExecutionEvents", () => {
  it("keeps a quiet stream open with heartbeat comments and stops reading when the client leaves", async () => {
    let reloads = 0;
    let ended = false;
    const app = express();
    app.get("/events", async (req, res) => {
      await streamExecutionEvents(
        req,
        res,
        running,
        async () => {
          reloads++;
          return running;
        },
        { pollMs: 10, heartbeatMs: 50 },
      );
      ended = true;
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const abort = new AbortController();
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, {
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes(": heartbeat")) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toContain("id: 1\nevent: task_started\n");
    abort.abort();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const after = reloads;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ended).toBe(true);
    expect(reloads).toBe(after);
    server.close();
  });

  it("reads the execution again when told of a change, not on a timer, and unsubscribes when the stream ends", async () => {
    const changes = new ExecutionChanges();
    let current: ExecutionView = running;
    let reloads = 0;
    const app = express();
    app.get("/events", async (req, res) => {
      await streamExecutionEvents(
        req,
        res,
        running,
        async () => {
          reloads++;
          return current;
        },
        // No timer would fire within the test: only a change can bring the next events.
        { pushedPollMs: 600_000, heartbeatMs: 600_000 },
        (onChange) => changes.subscribe(running.id, onChange),
      );
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/events`);
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("event: task_started")) text += new TextDecoder().decode((await reader.read()).value);
    expect(changes.watched).toBe(1);
    expect(reloads).toBe(0);
    current = {
      ...running,
      status: {
        phase: "Succeeded",
        tasks: [{ name: "t", phase: "Succeeded", startTime: "2026-01-01T00:00:00Z" }],
      },
      results: { t: [{ taskName: "t", attempt: 1, output: "done", executionTime: 1 } as never] },
    };
    changes.notify(running.id);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      text += new TextDecoder().decode(chunk.value);
    }
    expect(text).toContain("event: execution_completed");
    expect(reloads).toBe(1);
    expect(changes.watched).toBe(0);
    server.close();
  });
});
