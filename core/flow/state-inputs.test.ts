import { describe, expect, it } from "vitest";
import { flowDefinition } from "./definition.ts";
import { flowInputs, kickoffState } from "./state-inputs.ts";

const definition = flowDefinition.parse({
  name: "f",
  state: {
    type: "json_schema",
    json_schema: {
      type: "object",
      properties: { topic: { type: "string" }, limit: { type: "integer" }, audience: { type: "string" } },
      required: ["topic", "audience"],
    },
    default: { audience: "engineers" },
  },
  methods: { a: { start: true, do: { call: "expression", expr: "1" } } },
});

describe("a flow's kickoff inputs", () => {
  it("lists the state schema's fields", () => {
    expect(flowInputs(definition)).toEqual(["topic", "limit", "audience"]);
  });

  it("fills the defaults in, and names what is missing and what is invalid", () => {
    expect(kickoffState(definition, { topic: "t" })).toEqual({
      ok: true,
      state: { audience: "engineers", topic: "t" },
    });
    expect(kickoffState(definition, { limit: "ten" })).toEqual({
      ok: false,
      missing: ["topic"],
      invalid: ["/limit must be integer"],
    });
  });
});
