import pino from "pino";
import { describe, expect, it } from "vitest";
import { openTaskToolset } from "./task-toolset.ts";
import { testAssignment } from "./test-assignment.ts";

describe("openTaskToolset identify", () => {
  it("tells the approval policy what each offered tool's call is", async () => {
    const base = testAssignment();
    const toolset = await openTaskToolset(
      { ...base, agent: { ...base.agent, tools: ["http_request"] } },
      { fetch: globalThis.fetch, env: {}, logger: pino({ level: "silent" }) },
    );
    try {
      expect(toolset.identify("http_request", { method: "post", url: "https://api.example.com" })).toEqual({
        source: "http",
        method: "POST",
      });
      expect(toolset.identify("not_offered", {})).toBeUndefined();
    } finally {
      await toolset.close();
    }
  });
});
