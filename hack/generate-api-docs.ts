/**
 * Writes the reference part of docs/api.md from the OpenAPI document the crew API serves (api/openapi.ts with every
 * optional part mounted: connections, flows, the token endpoint, the admin API), so the reference cannot drift from the
 * routes. The text above the marker is written by hand; everything below it is generated.
 * `node hack/generate-api-docs.ts` writes it; hack/generate-api-docs.test.ts fails when docs/api.md is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { format, resolveConfig } from "prettier";
import { adminPaths } from "../api/admin/openapi-paths.ts";
import { connectionsPaths } from "../api/connections/openapi-paths.ts";
import { flowPaths } from "../api/flow-openapi-paths.ts";
import { tokenEndpointPaths } from "../api/oauth/openapi-paths.ts";
import { openApiDocument } from "../api/openapi.ts";
import { apiReference, type OpenApiDocument } from "./api-reference.ts";

export const API_DOC = join(import.meta.dirname, "..", "docs", "api.md");

export const MARKER =
  "<!-- Generated below by hack/generate-api-docs.ts from the OpenAPI document. Do not edit below: run `node hack/generate-api-docs.ts`. -->";

/** The whole document, as an API with an admin key and the integrations service configured serves it. */
export function fullApiDocument(): OpenApiDocument {
  const document = openApiDocument({ ...connectionsPaths, ...flowPaths, ...tokenEndpointPaths(), ...adminPaths() });
  // A JSON round trip: the reference reads the document as a client would, not zod-openapi's objects.
  return JSON.parse(JSON.stringify(document)) as OpenApiDocument;
}

/** docs/api.md as it should be: its hand-written part as it is, the reference generated after the marker. */
export async function expectedApiDoc(current = readFileSync(API_DOC, "utf8")): Promise<string> {
  const at = current.indexOf(MARKER);
  if (at < 0) throw new Error(`docs/api.md has lost its marker line; put it back:\n${MARKER}`);
  const text = `${current.slice(0, at + MARKER.length)}\n\n${apiReference(fullApiDocument())}\n`;
  const options = await resolveConfig(API_DOC);
  return format(text, { ...options, parser: "markdown" });
}

if (import.meta.main) {
  writeFileSync(API_DOC, await expectedApiDoc());
  console.log("wrote docs/api.md");
}
