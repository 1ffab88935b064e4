import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { apiReference, type OpenApiDocument } from "./api-reference.ts";
import { API_DOC, expectedApiDoc, fullApiDocument, MARKER } from "./generate-api-docs.ts";

describe("docs/api.md", () => {
  it("is what `node hack/generate-api-docs.ts` writes from the OpenAPI document", async () => {
    const onDisk = readFileSync(API_DOC, "utf8");
    expect(onDisk, "docs/api.md is out of date: run node hack/generate-api-docs.ts").toBe(await expectedApiDoc(onDisk));
    // Building the document loads every route module and prettier: seconds on a busy CI machine, not a speed check.
  }, 60_000);

  it("shows every operation and every schema of the document the API serves", () => {
    const text = readFileSync(API_DOC, "utf8");
    const document = fullApiDocument();
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of Object.keys(item)) expect(text).toContain(`\`${method.toUpperCase()} ${path}\``);
    }
    for (const name of Object.keys(document.components?.schemas ?? {})) expect(text).toContain(`\n### ${name}\n`);
  });

  it("refuses to write when the marker between the hand-written and the generated part is gone", async () => {
    await expect(expectedApiDoc("# The crew API\n\nNo marker here.\n")).rejects.toThrow(MARKER);
  });

  it("keeps the hand-written part above the marker as it is", async () => {
    const handWritten = "# The crew API\n\nWritten by hand, kept as it is.\n\n";
    expect(await expectedApiDoc(`${handWritten}${MARKER}\nold reference\n`)).toMatch(
      new RegExp(`^${handWritten.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
    );
  });
});

describe("apiReference", () => {
  const error = { $ref: "#/components/schemas/Error" };
  const errors = {
    "400": { description: "Bad request", content: { "application/json": { schema: error } } },
    "500": { description: "Unexpected failure", content: { "application/json": { schema: error } } },
  };
  const document: OpenApiDocument = {
    paths: {
      "/inputs": { get: { tags: ["default crew"], summary: "Inputs the crew needs", responses: { ...errors } } },
      "/crews/{crew}/inputs": {
        get: {
          tags: ["crews"],
          summary: "Inputs the crew needs",
          parameters: [{ name: "crew", in: "path", required: true, description: "Crew name" }],
          responses: { ...errors },
        },
      },
      "/healthz": {
        get: {
          tags: ["service"],
          summary: "Liveness",
          security: [],
          responses: { "200": { description: "Alive" }, ...errors },
        },
      },
    },
    components: {
      schemas: {
        Error: {
          type: "object",
          properties: { error: { type: "string" }, details: { description: "What was wrong" } },
          required: ["error"],
        },
      },
    },
  };
  const text = apiReference(document);

  it("shows an operation served at the root and under /crews/{crew} once, with both paths", () => {
    expect(text).toContain("#### `GET /inputs`, `GET /crews/{crew}/inputs`");
    expect(text.match(/GET \/crews\/\{crew\}\/inputs/g)).toHaveLength(1);
    expect(text).toContain("| `crew` | path | yes | Crew name (in the `/crews/{crew}/…` form) |");
  });

  it("lists the answers most operations share once, and names them on each operation", () => {
    expect(text).toContain("## Common answers");
    expect(text).toContain("| 400 | Bad request | [Error](#error) |");
    expect(text.match(/\| 400 \| Bad request/g)).toHaveLength(1);
    expect(text).toContain("Also the [common answers](#common-answers): 400, 500.");
  });

  it("says which operations need no token", () => {
    expect(text).toMatch(/#### `GET \/healthz`\n\nLiveness\.\n\nAuthorization: none\./);
    expect(text).toMatch(/#### `GET \/inputs`.*\n\nInputs the crew needs\.\n\nAuthorization: a bearer token\./);
  });

  it("gives each schema a table of its fields", () => {
    expect(text).toContain("### Error");
    expect(text).toContain("| `error` | string | yes |  |");
    expect(text).toContain("| `details` | any JSON |  | What was wrong |");
  });
});
