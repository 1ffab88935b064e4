import { describe, expect, it } from "vitest";
import { buildAssignment } from "./assignment.ts";
import { crewSpec } from "./crew-resource.ts";
import type { DecideInput } from "./decision.ts";

const agents = [{ name: "fetcher", role: "Fetcher", goal: "Fetch", tools: ["http_request"] }];
const toolCall = { tool: "http_request", arguments: '{"method": "GET", "url": "{url}"}' };
const task = { name: "fetch", agent: "fetcher", description: "Fetch {url}", expectedOutput: "The page", toolCall };

describe("a task that calls one tool", () => {
  it("is handed to the runner with its arguments' {placeholders} filled in, needing no model", () => {
    const spec = crewSpec.parse({ agents, tasks: [task] });
    const inputs = { url: "https://a.test/x" };
    const input = { execution: { name: "x1", spec: { crewRef: { name: "c" }, inputs } } } as unknown as DecideInput;
    const assignment = buildAssignment(input, spec, 0);
    expect(assignment.task.toolCall).toEqual({
      tool: "http_request",
      arguments: '{"method": "GET", "url": "https://a.test/x"}',
    });
    expect(assignment.agent.llm).toBeUndefined();
  });

  it("is refused on the crewai runtime, whose own loop would ask the model instead", () => {
    const result = crewSpec.safeParse({ agents, tasks: [task], runtime: "crewai" });
    expect(result.success ? [] : result.error.issues.map((i) => i.message)).toEqual([
      'task "fetch": toolCall is carried out by the kubecrew runtime only: set spec.runtime to kubecrew',
    ]);
  });
});
