import { tool, jsonSchema, type ToolSet } from "ai";
import { describe, expect, it } from "vitest";
import { refusingHeldTools, type IdentifyCall } from "./tool-approvals.ts";

// A coworker's loop cannot park on a held call (issue 32 item 4): the call is refused, never made.

describe("refusingHeldTools", () => {
  const made: unknown[] = [];
  const tools: ToolSet = {
    http_request: tool({
      description: "HTTP",
      inputSchema: jsonSchema<{ method: string }>({ type: "object", properties: { method: { type: "string" } } }),
      execute: async (input) => {
        made.push(input);
        return "done";
      },
    }),
  };
  const identify: IdentifyCall = (name, input) =>
    name === "http_request" ? { source: "http", method: (input as { method: string }).method } : undefined;
  const options = { toolCallId: "c1", messages: [] };

  it("refuses a call the rules hold, and makes the others", async () => {
    const guarded = refusingHeldTools(tools, ["http_request:POST"], identify);
    await expect(guarded.http_request!.execute!({ method: "POST" }, options)).rejects.toThrow(
      "http_request:POST needs a person's approval (toolPolicy.requireApproval): ask the agent who delegated to you to make this call",
    );
    expect(made).toEqual([]);
    expect(await guarded.http_request!.execute!({ method: "GET" }, options)).toBe("done");
    expect(made).toEqual([{ method: "GET" }]);
  });

  it("leaves the tools as they are without rules", () => {
    expect(refusingHeldTools(tools, [], identify)).toBe(tools);
  });
});
