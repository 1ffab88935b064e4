import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { JsonSchema } from "./schema-arbitrary.ts";

export interface Parameter {
  name: string;
  in: "path" | "header" | "query" | "cookie";
  required?: boolean;
  schema: JsonSchema;
}
export interface Response {
  description: string;
  headers?: Record<string, { required?: boolean; schema: JsonSchema }>;
  content?: Record<string, { schema: JsonSchema }>;
}
export interface OperationObject {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, Response>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, JsonSchema> };
}

/** One operation of the document: its method and path template, with what it takes and answers. */
export interface Operation extends OperationObject {
  method: string;
  path: string;
}

export const operationsOf = (doc: OpenApiDocument): Operation[] =>
  Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ ...op, method: method.toUpperCase(), path })),
  );

/** The operation a concrete request path and method reach, if the document has one. */
export function operationFor(operations: Operation[], method: string, path: string): Operation | undefined {
  const segments = path.split("/");
  const matches = operations.filter((op) => {
    const template = op.path.split("/");
    return template.length === segments.length && template.every((t, i) => t.startsWith("{") || t === segments[i]);
  });
  // A literal segment beats a parameter (/status/x is the status route, not /{kickoff_id}/status).
  const ranked = matches.sort((a, b) => literalCount(b.path) - literalCount(a.path));
  return ranked.find((op) => op.method === method || (method === "HEAD" && op.method === "GET")) ?? ranked[0];
}
const literalCount = (path: string) => path.split("/").filter((s) => s && !s.startsWith("{")).length;

/**
 * Checks an answer against the document with ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect): the status must be
 * listed for the operation, a JSON body must match that response's schema, required headers must be present.
 * Returns what is wrong, or undefined.
 */
export function answerChecker(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: "openapi", components: doc.components });
  const compiled = new Map<JsonSchema, ReturnType<typeof ajv.compile>>();
  const validator = (schema: JsonSchema) => {
    let v = compiled.get(schema);
    if (!v) {
      v = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')));
      compiled.set(schema, v);
    }
    return v;
  };
  return (
    op: Operation,
    answer: { status: number; headers: Record<string, string | string[] | undefined>; body: string },
  ): string | undefined => {
    const response = op.responses[String(answer.status)];
    if (!response) return `${answer.status} is not listed for ${op.method} ${op.path}`;
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      if (header.required && answer.headers[name.toLowerCase()] === undefined) {
        return `${answer.status} of ${op.method} ${op.path} lacks the documented ${name} header`;
      }
    }
    const type = String(answer.headers["content-type"] ?? "");
    // An answer in another media type the response lists (an HTML page of a browser route) has no schema to check.
    const otherTypes = Object.keys(response.content ?? {}).filter((t) => t !== "application/json");
    if (otherTypes.some((t) => type.startsWith(t))) return undefined;
    const schema = response.content?.["application/json"]?.schema;
    if (!schema) return undefined;
    if (!type.startsWith("application/json")) return `${answer.status} answered ${type || "no content type"}`;
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return `${answer.status} body is not JSON: ${answer.body.slice(0, 200)}`;
    }
    const validate = validator(schema);
    if (!validate(body)) {
      return `${answer.status} body does not match the schema: ${ajv.errorsText(validate.errors)}; ${answer.body.slice(0, 300)}`;
    }
    return undefined;
  };
}
