import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import {
  answerChecker,
  operationFor,
  operationsOf,
  type OpenApiDocument,
  type Operation,
} from "../../support/fuzz/openapi-document.ts";

// The flow routes are in the OpenAPI document kubecrew dev serves, and what they really answer — every shape of
// status, each error — validates against the schema the document gives for that code.

const flow = `schema: crewai.flow/v1
name: SignOffFlow
state:
  type: json_schema
  json_schema:
    type: object
    properties: { title: { type: string, minLength: 1 }, pages: { type: integer } }
    required: [title]
methods:
  draft:
    start: true
    do: { call: expression, expr: "'draft of ' + state.title" }
  sign_off:
    listen: draft
    human_feedback: { message: "Sign this off?", emit: [signed, refused], default_outcome: signed }
    do: { call: expression, expr: "outputs.draft" }
  file:
    listen: signed
    do: { call: expression, expr: "{'filed': outputs.sign_off.output, 'note': outputs.sign_off.feedback}" }
`;

let dev: RunningDev;
let doc: OpenApiDocument;
let operations: Operation[];
let check: ReturnType<typeof answerChecker>;

beforeAll(async () => {
  dev = await startTestDev({ "sign-off-flow.yaml": flow }, { env: { KUBECREW_MOCK_FEEDBACK_SECONDS: "0" } });
  doc = (await (await fetch(`${dev.url}/openapi.json`)).json()) as OpenApiDocument;
  operations = operationsOf(doc);
  check = answerChecker(doc);
}, 60_000);
afterAll(() => dev?.stop());

/** Sends the request, checks the answer against the document (its code listed, its body valid) and returns it. */
async function documented(method: string, path: string, body?: unknown, token: string | null = tokens.org) {
  const res = await fetch(`${dev.url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  const op = operationFor(operations, method, path);
  expect(op, `${method} ${path} is documented`).toBeDefined();
  expect(op!.path).toMatch(/^\/flows/);
  const problem = check(op!, { status: res.status, headers: Object.fromEntries(res.headers), body: text });
  expect(problem, `${method} ${path}`).toBeUndefined();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: JSON.parse(text) as Record<string, any> };
}

describe("the flow routes in the served OpenAPI document", () => {
  it("lists every flow route with its bodies and error answers", () => {
    const expected: [string, string, string[]][] = [
      ["/flows", "get", ["200", "401", "500"]],
      ["/flows/{flow}/inputs", "get", ["200", "401", "404"]],
      ["/flows/{flow}/kickoff", "post", ["200", "400", "401", "404", "422"]],
      ["/flows/{flow}/status/{kickoff_id}", "get", ["200", "401", "404"]],
      ["/flows/{flow}/status/{kickoff_id}/events", "get", ["200", "401", "404"]],
      ["/flows/{flow}/resume", "post", ["200", "400", "401", "404", "409"]],
      ["/flows/{flow}/stop/{kickoff_id}", "post", ["200", "401", "404", "409"]],
    ];
    for (const [path, method, codes] of expected) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(Object.keys(op!.responses)).toEqual(expect.arrayContaining(codes));
      for (const code of codes.filter((c) => c !== "200")) {
        expect(op!.responses[code]!.content!["application/json"]!.schema).toEqual({
          $ref: "#/components/schemas/Error",
        });
      }
    }
    expect(doc.paths["/flows/{flow}/kickoff"]!.post!.requestBody!.content["application/json"]!.schema).toEqual({
      $ref: "#/components/schemas/FlowKickoffRequest",
    });
    expect(doc.components.schemas["FlowStatusResponse"]).toBeDefined();
  });

  it("every answer of a run, from kickoff through feedback to the end, matches the documented schema", async () => {
    const listed = (await documented("GET", "/flows")).body.flows[0];
    expect(listed).toMatchObject({ name: "sign-off-flow", methods: ["draft", "sign_off", "file"] });
    expect(listed.graph.edges).toEqual([
      { from: "draft", to: "sign_off" },
      { from: "sign_off", to: "file", outcome: "signed" },
    ]);
    expect((await documented("GET", "/flows/sign-off-flow/inputs")).body).toEqual({ inputs: ["title", "pages"] });
    const refused = await documented("POST", "/flows/sign-off-flow/kickoff", { inputs: { pages: "many" } });
    expect(refused.status).toBe(422);
    expect(refused.body.details).toMatchObject({ missing_inputs: ["title"] });
    expect((await documented("POST", "/flows/sign-off-flow/kickoff", "{")).status).toBe(400);
    expect((await documented("GET", "/flows/nope/inputs")).status).toBe(404);
    expect((await documented("GET", "/flows/sign-off-flow/inputs", undefined, null)).status).toBe(401);

    const { body } = await documented("POST", "/flows/sign-off-flow/kickoff", { inputs: { title: "Q3" } });
    const id = body.kickoff_id as string;
    const waiting = await waitFor(async () => {
      const s = await documented("GET", `/flows/sign-off-flow/status/${id}`);
      return s.body.state === "PENDING_HUMAN_INPUT" ? s.body : undefined;
    });
    expect(waiting.human_feedback).toEqual({
      method: "sign_off",
      message: "Sign this off?",
      emit: ["signed", "refused"],
      output: "draft of Q3",
    });
    const wrongMethod = await documented("POST", "/flows/sign-off-flow/resume", { execution_id: id, task_id: "x" });
    expect(wrongMethod.status).toBe(409);
    const resumed = await documented("POST", "/flows/sign-off-flow/resume", {
      execution_id: id,
      human_feedback: "signed, file it",
    });
    expect(resumed.body).toMatchObject({ status: "resumed", outcome: "signed" });
    const done = await waitFor(async () => {
      const s = await documented("GET", `/flows/sign-off-flow/status/${id}`);
      return s.body.status === "completed" ? s.body : undefined;
    });
    expect(done.result.outputs.file).toEqual({ filed: "draft of Q3", note: "signed, file it" });
    expect(done.result.outcomes).toEqual([{ method: "sign_off", outcome: "signed" }]);
    expect((await documented("POST", `/flows/sign-off-flow/stop/${id}`)).status).toBe(409);
    expect((await documented("GET", `/flows/sign-off-flow/status/${crypto.randomUUID()}`)).status).toBe(404);

    const second = (await documented("POST", "/flows/sign-off-flow/kickoff", { inputs: { title: "Q4" } })).body;
    expect((await documented("POST", `/flows/sign-off-flow/stop/${second.kickoff_id}`)).body).toEqual({
      status: "stopped",
    });
    const stopped = await documented("GET", `/flows/sign-off-flow/status/${second.kickoff_id}`);
    expect(stopped.body).toMatchObject({ status: "error", state: "FAILED", error: "Execution stopped" });
  });
});
