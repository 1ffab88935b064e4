import { describe, expect, it } from "vitest";
import { statusResponse as statusShape } from "./api-bodies.ts";
import type { ExecutionStatus } from "./execution.ts";
import { statusResponse } from "./status-view.ts";
import type { TaskResultSpec } from "./task-result.ts";

const result = (taskName: string, over: Partial<TaskResultSpec> = {}): TaskResultSpec => ({
  executionRef: { name: "x" },
  taskName,
  taskIndex: 0,
  agent: `${taskName} agent`,
  output: `${taskName} output`,
  attempt: 1,
  executionTime: 10.5,
  ...over,
});

const tasks = (...phases: NonNullable<ExecutionStatus["tasks"]>) => phases;

describe("statusResponse", () => {
  it("answers running with the current task and the progress", () => {
    const body = statusResponse(
      {
        phase: "Running",
        currentTask: "analysis",
        progress: { completedTasks: 1, totalTasks: 3 },
        tasks: tasks({ name: "research", phase: "Succeeded" }, { name: "analysis", phase: "Running" }),
      },
      { research: [result("research")] },
      "research",
      3,
    );
    expect(body).toEqual({
      status: "running",
      state: "RUNNING",
      current_task: "analysis",
      progress: { completed_tasks: 1, total_tasks: 3 },
    });
    expect(Object.keys(body)).toEqual(["status", "state", "current_task", "progress"]);
    expect(statusShape.parse(body)).toEqual(body);
  });

  it("answers running with the first task and no progress for an execution not picked up yet", () => {
    for (const status of [undefined, {}, { phase: "Pending" as const }]) {
      expect(statusResponse(status, {}, "research", 3)).toEqual({
        status: "running",
        state: "RUNNING",
        current_task: "research",
        progress: { completed_tasks: 0, total_tasks: 3 },
      });
    }
  });

  it("answers completed with the final output, every task's output, agent and time, and the total time", () => {
    const body = statusResponse(
      {
        phase: "Succeeded",
        executionTime: 108.5,
        progress: { completedTasks: 2, totalTasks: 2 },
        tasks: tasks(
          { name: "research", agent: "Researcher", phase: "Succeeded", executionTime: 10.5 },
          { name: "report", agent: "Writer", phase: "Succeeded", executionTime: 3 },
        ),
      },
      {
        research: [
          result("research", { output: undefined, error: "429", attempt: 1 }),
          result("research", { attempt: 2 }),
        ],
        report: [result("report", { output: "# Final", agent: "AI Writer", executionTime: 3.25 })],
      },
      "research",
      2,
    );
    expect(body).toEqual({
      status: "completed",
      state: "SUCCESS",
      result: {
        output: "# Final",
        tasks: [
          { task_id: "research", output: "research output", agent: "research agent", execution_time: 10.5 },
          { task_id: "report", output: "# Final", agent: "AI Writer", execution_time: 3.25 },
        ],
      },
      execution_time: 108.5,
    });
    expect(Object.keys(body)).toEqual(["status", "state", "result", "execution_time"]);
    if (body.status !== "completed") throw new Error("not completed");
    expect(Object.keys(body.result)).toEqual(["output", "tasks"]);
    expect(Object.keys(body.result.tasks[0]!)).toEqual(["task_id", "output", "agent", "execution_time"]);
    expect(statusShape.parse(body)).toEqual(body);
  });

  it("adds a task's step count and tools used when its result carries them", () => {
    const body = statusResponse(
      {
        phase: "Succeeded",
        executionTime: 5,
        tasks: tasks({ name: "look", phase: "Succeeded" }, { name: "old", phase: "Succeeded" }),
      },
      {
        look: [result("look", { steps: [], stepCount: 4, toolsUsed: ["search", "http_request"] })],
        old: [result("old")],
      },
      "look",
      2,
    );
    if (body.status !== "completed") throw new Error("not completed");
    expect(body.result.tasks).toEqual([
      {
        task_id: "look",
        output: "look output",
        agent: "look agent",
        execution_time: 10.5,
        steps: 4,
        tools_used: ["search", "http_request"],
      },
      { task_id: "old", output: "old output", agent: "old agent", execution_time: 10.5 },
    ]);
    expect(statusShape.parse(body)).toEqual(body);
  });

  it("falls back to the task state's agent and time when a result is not visible", () => {
    const body = statusResponse(
      {
        phase: "Succeeded",
        executionTime: 5,
        tasks: tasks({ name: "only", agent: "Writer", phase: "Succeeded", executionTime: 4 }),
      },
      {},
      "only",
      1,
    );
    expect(body).toMatchObject({
      result: { output: "", tasks: [{ task_id: "only", output: "", agent: "Writer", execution_time: 4 }] },
    });
  });

  it("answers error with the message and the time for a failed execution", () => {
    const body = statusResponse(
      { phase: "Failed", error: 'Task "analysis" failed: invalid API key', executionTime: 23.1 },
      {},
      "research",
      3,
    );
    expect(body).toEqual({
      status: "error",
      state: "FAILED",
      error: 'Task "analysis" failed: invalid API key',
      execution_time: 23.1,
    });
    expect(Object.keys(body)).toEqual(["status", "state", "error", "execution_time"]);
    expect(statusShape.parse(body)).toEqual(body);
  });

  it("answers error for a stopped execution", () => {
    expect(
      statusResponse({ phase: "Stopped", error: "Execution stopped", executionTime: 2 }, {}, "research", 3),
    ).toEqual({
      status: "error",
      state: "FAILED",
      error: "Execution stopped",
      execution_time: 2,
    });
  });

  it("gives a generic message and zero time when a failed status lacks them", () => {
    expect(statusResponse({ phase: "Failed" }, {}, "research", 3)).toEqual({
      status: "error",
      state: "FAILED",
      error: "Execution failed",
      execution_time: 0,
    });
  });
});
