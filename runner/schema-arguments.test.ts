import { describe, expect, it } from "vitest";
import { argumentsFromSchema } from "./schema-arguments.ts";

describe("argumentsFromSchema", () => {
  it("makes up required values, strings valid for their format (as the apps' send_email schema asks)", () => {
    expect(
      argumentsFromSchema({
        type: "object",
        required: ["to", "subject", "when", "link", "day"],
        properties: {
          to: { type: "array", minItems: 1, items: { type: "string", format: "email" } },
          subject: { type: "string" },
          when: { type: "string", format: "date-time" },
          link: { type: "string", format: "uri" },
          day: { type: "string", format: "date" },
          cc: { type: "string", format: "email" },
        },
      }),
    ).toEqual({
      to: ["x@example.com"],
      subject: "x",
      when: "2026-01-01T00:00:00Z",
      link: "https://example.com/x",
      day: "2026-01-01",
    });
  });
});
