import { request } from "node:http";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTokensDev, type TokensDev } from "../tokens/support.ts";

// Issue 12 item 12: the served OpenAPI document matches the specification (CrewAI AMP: the status path parameter is
// `kickoff_id`, a string of format uuid; GET /status/{kickoff_id} lists 200, 401, 404 and 500 with the error body),
// names every component, and lists every code a route really answers: each is provoked here on the running API.

interface Operation {
  parameters?: { name: string; in: string; required?: boolean; schema: { type?: string; format?: string } }[];
  responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
}

let api: TokensDev;
let doc: Document;
let token: string;

beforeAll(async () => {
  api = await startTokensDev(inject("redisUrl"), { KUBECREW_BODY_LIMIT_BYTES: "4096" });
  token = (await api.store.createToken({ kind: "org", crews: "*" })).token;
  doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as Document;
});
afterAll(() => api?.stop());

const statusPaths = [
  "/status/{kickoff_id}",
  "/{kickoff_id}/status",
  "/crews/{crew}/status/{kickoff_id}",
  "/crews/{crew}/{kickoff_id}/status",
];

describe("the status routes as the specification has them", () => {
  it.each(statusPaths)("GET %s takes kickoff_id, a required string of format uuid", (path) => {
    const kickoffId = doc.paths[path]?.get?.parameters?.find((p) => p.name === "kickoff_id");
    expect(kickoffId).toMatchObject({ in: "path", required: true, schema: { type: "string", format: "uuid" } });
    expect(doc.paths[path]!.get!.parameters!.map((p) => p.name)).not.toContain("id");
  });

  it("no path names the execution {id}", () => {
    expect(Object.keys(doc.paths).filter((p) => p.includes("{id}") && !p.startsWith("/admin/"))).toEqual([]);
  });

  it.each(statusPaths)("GET %s lists 200, 401, 404 and 500, the errors with the error body", (path) => {
    const responses = doc.paths[path]!.get!.responses;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(["200", "401", "404", "500"]));
    for (const code of ["401", "404", "500"]) {
      expect(responses[code]!.content!["application/json"]!.schema.$ref).toBe("#/components/schemas/Error");
    }
    expect(doc.components.schemas["Error"]).toMatchObject({
      properties: { error: expect.anything(), message: expect.anything() },
      required: ["error", "message"],
    });
  });
});

it("names every component: no generated __schema0-style names", () => {
  const names = Object.keys(doc.components.schemas);
  expect(names.length).toBeGreaterThan(0);
  expect(names.filter((n) => !/^[A-Z][A-Za-z0-9]*$/.test(n))).toEqual([]);
});

/** Any method and raw path (fetch normalises paths and refuses TRACE). */
function send(path: string, method: string, headers: Record<string, string> = {}, body?: string | Buffer) {
  return new Promise<number>((resolve, reject) => {
    const req = request(`${api.url}${path}`, { method, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("every code a route answers is in the document", () => {
  const auth = () => ({ authorization: `Bearer ${token}` });
  const json = { "content-type": "application/json" };
  const cases: [string, string, string, () => Promise<number>][] = [
    ["400", "/status/{kickoff_id}", "get", () => send("/status/%ff", "GET", auth())],
    ["400", "/crews/{crew}/inputs", "get", () => send("/crews/%/inputs", "GET", auth())],
    ["400", "/kickoff", "post", () => send("/kickoff", "POST", { ...auth(), ...json }, "{")],
    ["401", "/status/{kickoff_id}", "get", () => send(`/status/${randomUUID()}`, "GET")],
    ["404", "/{kickoff_id}/status", "get", () => send(`/${randomUUID()}/status`, "GET", auth())],
    ["404", "/crews/{crew}/kickoff", "post", () => send("/crews/nope/kickoff", "POST", { ...auth(), ...json }, "{}")],
    ["405", "/inputs", "get", () => send("/inputs", "TRACE", auth())],
    ["405", "/status/{kickoff_id}", "get", () => send(`/status/${randomUUID()}`, "DELETE", auth())],
    ["413", "/kickoff", "post", () => send("/kickoff", "POST", { ...auth(), ...json }, "x".repeat(5000))],
    ["415", "/kickoff", "post", () => send("/kickoff", "POST", { ...auth(), "content-type": "text/plain" }, "hi")],
    [
      "415",
      "/kickoff",
      "post",
      () => send("/kickoff", "POST", { ...auth(), ...json, "content-encoding": "compress" }, "{}"),
    ],
    ["422", "/kickoff", "post", () => send("/kickoff", "POST", { ...auth(), ...json }, '{"inputs":{}}')],
    ["400", "/oauth/token", "post", () => send("/oauth/token", "POST", json, "{}")],
    ["401", "/oauth/token", "post", () => send("/oauth/token", "POST", formType, "grant_type=client_credentials")],
    ["405", "/oauth/token", "post", () => send("/oauth/token", "GET")],
  ];
  it.each(cases)("%s from %s (%s) is answered and listed", async (code, path, method, provoke) => {
    expect(String(await provoke())).toBe(code);
    expect(Object.keys(doc.paths[path]![method]!.responses)).toContain(code);
  });
});

const formType = { "content-type": "application/x-www-form-urlencoded" };
