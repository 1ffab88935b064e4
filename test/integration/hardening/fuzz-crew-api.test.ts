import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { crewYaml } from "../../support/dev-server.ts";
import {
  answerChecker,
  operationsOf,
  type OpenApiDocument,
  type Operation,
} from "../../support/fuzz/openapi-document.ts";
import {
  contentType,
  encoding,
  goodEncodings,
  invalidBody,
  junkHeader,
  otherMethod,
  segment,
  deepJson,
  type Encoding,
} from "../../support/fuzz/request-parts.ts";
import { valuesOf } from "../../support/fuzz/schema-arbitrary.ts";
import { send, type RawAnswer, type RawRequest } from "../../support/fuzz/send.ts";
import { basic, startTokensDev, type TokensDev } from "../tokens/support.ts";

// Property-based requests generated from the served OpenAPI document against `kubecrew dev` with the token endpoint
// (issue 12): documented and undocumented methods, paths with valid, random and malformed %-escapes, good and bad
// tokens, valid bodies generated from the request schemas and invalid ones, lying and unknown Content-Encodings.
// Every answer is below 500 and matches the document (status listed, body valid for its schema, required headers
// present, checked with ajv); a refused kickoff creates no execution and a refused token request issues no token.
// Loopback only (webhook URLs point at a closed loopback port), a fixed seed and number of runs.

const RUNS = 500;
const SEED = 1212;

let api: TokensDev;
let doc: OpenApiDocument;
let operations: Operation[];
let check: ReturnType<typeof answerChecker>;
const auth = { org: "", user: "", otherCrew: "", basic: "", wrongSecret: "" };
const kickoffIds: string[] = [];

beforeAll(async () => {
  const crews = mkdtempSync(join(tmpdir(), "kubecrew-fuzz-crews-"));
  writeFileSync(join(crews, "fuzz.yaml"), crewYaml("fuzz", "mock", { tasks: 1 }));
  api = await startTokensDev(inject("redisUrl"), {
    KUBECREW_CREWS_DIR: crews,
    KUBECREW_DEFAULT_CREW: "fuzz",
    KUBECREW_BODY_LIMIT_BYTES: "16384",
  });
  auth.org = `Bearer ${(await api.store.createToken({ kind: "org", crews: "*" })).token}`;
  auth.user = `Bearer ${(await api.store.createToken({ kind: "user", crews: "*", user: "fuzz-user" })).token}`;
  auth.otherCrew = `Bearer ${(await api.store.createToken({ kind: "org", crews: ["someone-else"] })).token}`;
  const client = await api.store.createClient({ role: "org", crews: "*" });
  auth.basic = basic(client.record.clientId, client.clientSecret);
  auth.wrongSecret = basic(client.record.clientId, "not-the-secret");
  doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as OpenApiDocument;
  operations = operationsOf(doc);
  check = answerChecker(doc);
  const started = await fetch(`${api.url}/kickoff`, {
    method: "POST",
    headers: { authorization: auth.org, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic: "seed" } }),
  });
  kickoffIds.push(((await started.json()) as { kickoff_id: string }).kickoff_id);
});
afterAll(() => api?.stop());

/** Webhook URLs: a closed loopback port, or (hostile) ones the outbound policy refuses at kickoff (never reached). */
const loopbackWebhook = fc.constantFrom("http://127.0.0.1:9/hook", "http://[::1]:9/hook");
const refusedWebhook = fc.constantFrom(
  "file:///etc/passwd",
  "javascript:alert(1)",
  "http://169.254.169.254/latest/meta-data/",
  "ftp://127.0.0.1/x",
  "not a url",
);

/**
 * A request is either documented (the operation's method, a token that may use it, parameters and a body valid for
 * the document's schemas) or hostile (any of those replaced by something a careless client or an attacker sends).
 */
type Mode = "documented" | "hostile";

function pathFor(op: Operation, mode: Mode): fc.Arbitrary<string> {
  const parts = op.path.split("/").map((part): fc.Arbitrary<string> => {
    const name = /^\{(.+)\}$/.exec(part)?.[1];
    if (!name) return fc.constant(part);
    const schema = op.parameters?.find((p) => p.name === name)?.schema ?? { type: "string" };
    const known = name === "crew" ? fc.constant("fuzz") : fc.constantFrom(...kickoffIds);
    const valid = fc.oneof(known, valuesOf(schema, doc.components.schemas) as fc.Arbitrary<string>);
    return mode === "documented" ? valid.map(encodeURIComponent) : segment(valid);
  });
  return fc.tuple(...parts).map((p) => p.join("/"));
}

type Body = { type: string | undefined; text: string; encoding?: Encoding };

function bodyFor(op: Operation, mode: Mode): fc.Arbitrary<Body | undefined> {
  const [documentedType, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
  if (!documentedType || !media) {
    if (mode === "documented") return fc.constant(undefined);
    return fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.record({ type: contentType("application/json"), text: invalidBody, encoding }) },
    );
  }
  let valid = valuesOf(media.schema, doc.components.schemas, 3, {
    uri: mode === "documented" ? loopbackWebhook : fc.oneof(loopbackWebhook, refusedWebhook),
  });
  if (op.operationId.startsWith("kickoff")) {
    // Half the time the crew's own input, as a client that read GET /inputs sends: a run that really starts.
    valid = fc.oneof(
      valid,
      valid.map((v) => ({ ...(v as object), inputs: { ...(v as { inputs?: object }).inputs, topic: "x" } })),
    );
  }
  const serialise = (v: unknown) =>
    documentedType === "application/x-www-form-urlencoded"
      ? new URLSearchParams(Object.entries(v as object).map(([k, x]): [string, string] => [k, String(x)])).toString()
      : JSON.stringify(v);
  if (mode === "documented") {
    return fc.record({
      type: fc.constant(documentedType),
      text: valid.map(serialise),
      encoding: fc.option(fc.constantFrom<Encoding>(...goodEncodings), { nil: undefined, freq: 3 }),
    });
  }
  return fc.record({
    type: contentType(documentedType),
    text: fc.oneof(valid.map(serialise), invalidBody),
    encoding,
  });
}

function authFor(op: Operation, mode: Mode): fc.Arbitrary<string | undefined> {
  const token = op.path.endsWith("/oauth/token");
  if (mode === "documented") return fc.constant(token ? auth.basic : auth.org);
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...(token ? [auth.wrongSecret] : [auth.user, auth.otherCrew])) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: junkHeader },
  );
}

/** Counterexamples name the operation (`POST /kickoff`), not its whole document entry. */
const requestFor = (op: Operation, mode: Mode): fc.Arbitrary<{ operation: string; req: RawRequest }> =>
  fc
    .record({
      method: mode === "documented" ? fc.constant(op.method) : fc.oneof(fc.constant(op.method), otherMethod),
      path: pathFor(op, mode),
      authorization: authFor(op, mode),
      body: bodyFor(op, mode),
      accept: fc.option(fc.constantFrom("application/json", "text/html", "*/*", "nonsense"), { nil: undefined }),
      idempotencyKey:
        mode === "documented"
          ? fc.constant(undefined)
          : fc.option(fc.stringMatching(/^[\x21-\x7e]{0,40}$/), { nil: undefined }),
    })
    .map(({ method, path, authorization, body, accept, idempotencyKey }) => {
      const headers: Record<string, string> = {};
      if (authorization !== undefined) headers["authorization"] = authorization;
      if (accept) headers["accept"] = accept;
      if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
      let bytes: Buffer | undefined;
      if (body) {
        if (body.type) headers["content-type"] = body.type;
        bytes = Buffer.from(body.text, "utf8");
        if (body.encoding) {
          headers["content-encoding"] = body.encoding.name;
          bytes = body.encoding.encode(bytes);
        }
      }
      return {
        operation: `${op.method} ${op.path}`,
        req: { method, path, headers, ...(bytes ? { body: bytes } : {}) },
      };
    });

/** How often each operation answered each status, to show what the run covered. */
const seen = new Map<string, number>();

const tokenKeys = async () => (await api.redis.keys(`${api.prefix}token:*`)).length;

/** What is wrong with the answer to `req` (undefined when nothing is), writes included. */
async function judge(op: Operation, req: RawRequest): Promise<string | undefined> {
  const executionsBefore = api.dev.executionIds();
  const tokensBefore = await tokenKeys();
  const answer: RawAnswer = await send(api.url, req);
  const key = `${op.operationId} ${answer.status}`;
  seen.set(key, (seen.get(key) ?? 0) + 1);
  if (answer.status >= 500) return `${answer.status}: ${answer.body.slice(0, 300)}`;
  const wrong =
    req.method === "OPTIONS" && answer.status === 204
      ? undefined
      : req.method === "HEAD"
        ? op.responses[String(answer.status)] || answer.status === 405
          ? undefined
          : `HEAD answered ${answer.status}, not listed`
        : check(op, answer);
  if (wrong) return wrong;

  const created = api.dev.executionIds().filter((id) => !executionsBefore.includes(id));
  const isKickoff = op.operationId.startsWith("kickoff") && req.method === "POST" && answer.status === 200;
  if (isKickoff) {
    const { kickoff_id } = JSON.parse(answer.body) as { kickoff_id: string };
    if (!created.includes(kickoff_id) && !api.dev.executionIds().includes(kickoff_id)) {
      return `kickoff answered ${kickoff_id}, which does not exist`;
    }
    kickoffIds.push(kickoff_id);
  } else if (created.length) {
    return `a refused request (${answer.status}) created execution(s) ${created.join(", ")}`;
  }
  const issued = (await tokenKeys()) - tokensBefore;
  const isIssue = op.operationId === "issueToken" && req.method === "POST" && answer.status === 200;
  if (issued !== (isIssue ? 1 : 0)) return `${answer.status} from the token endpoint, ${issued} token(s) written`;
  return undefined;
}

it(`answers ${RUNS} generated requests below 500, as documented, writing nothing when it refuses`, async () => {
  const ops = fc.constantFrom(...operations.filter((op) => !op.path.startsWith("/admin/")));
  await fc.assert(
    fc.asyncProperty(
      fc
        .tuple(ops, fc.constantFrom<Mode>("documented", "hostile", "hostile"))
        .chain(([op, mode]) => requestFor(op, mode)),
      async ({ operation, req }) => {
        const wrong = await judge(
          operations.find((op) => `${op.method} ${op.path}` === operation)!,
          req,
        );
        if (wrong) throw new Error(`${req.method} ${req.path} ${JSON.stringify(req.headers)}: ${wrong}`);
      },
    ),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
  // FUZZ_REPORT=1 prints how often each route answered each status.
  if (process.env["FUZZ_REPORT"])
    console.log(
      [...seen]
        .sort()
        .map(([k, n]) => `${k}: ${n}`)
        .join("\n"),
    );
  // The documented flows were exercised too, not only refusals.
  expect(kickoffIds.length).toBeGreaterThan(1);
  expect([...seen.keys()]).toEqual(expect.arrayContaining(["issueToken 200", "getStatus 200", "getInputsForCrew 200"]));
}, 60_000);

/** The issue's repros that are single requests (1, 2, 3, 5, 7, 8, 10, 12, 13), through the same checks. */
const corpus: [string, string, () => RawRequest][] = [
  ["1 deep JSON", "POST /kickoff", () => json("POST", "/kickoff", deepJson(5000))],
  ["2 bad escape", "GET /status/{kickoff_id}", () => bare("GET", "/status/%ff")],
  ["2 lone %", "GET /status/{kickoff_id}", () => bare("GET", "/status/%")],
  ["2 crew %", "GET /crews/{crew}/inputs", () => bare("GET", "/crews/%/inputs")],
  ["3 gzip label", "POST /kickoff", () => json("POST", "/kickoff", '{"inputs":{"topic":"x"}}', "gzip")],
  ["3 br label", "POST /kickoff", () => json("POST", "/kickoff", '{"inputs":{"topic":"x"}}', "br")],
  [
    "3 token gzip label",
    "POST /oauth/token",
    () => ({
      method: "POST",
      path: "/oauth/token",
      headers: {
        authorization: auth.basic,
        "content-type": "application/x-www-form-urlencoded",
        "content-encoding": "gzip",
      },
      body: Buffer.from("grant_type=client_credentials"),
    }),
  ],
  ...(["file:///etc/passwd", "javascript:alert(1)", "http://169.254.169.254/latest/meta-data/"] as const).map(
    (url): [string, string, () => RawRequest] => [
      `5 webhook ${url}`,
      "POST /kickoff",
      () => json("POST", "/kickoff", JSON.stringify({ inputs: { topic: "x" }, crewWebhookUrl: url })),
    ],
  ),
  ["7 readyz", "GET /readyz", () => bare("GET", "/readyz")],
  ["8 TRACE", "GET /inputs", () => bare("TRACE", "/inputs")],
  [
    "10 not JSON",
    "POST /kickoff",
    () => ({
      ...json("POST", "/kickoff", "topic=x"),
      headers: { authorization: auth.org, "content-type": "text/plain" },
    }),
  ],
  ["10 null input", "POST /kickoff", () => json("POST", "/kickoff", '{"inputs":{"topic":null}}')],
  ["12 not a uuid", "GET /status/{kickoff_id}", () => bare("GET", "/status/not-a-uuid")],
  ["12 alias", "GET /{kickoff_id}/status", () => bare("GET", "/6f1c9a52-5c1e-4d84-9d8e-0f0e7d3b1a2c/status")],
  [
    "13 retried kickoff",
    "POST /kickoff",
    () => {
      const req = json("POST", "/kickoff", '{"inputs":{"topic":"retry"}}');
      return { ...req, headers: { ...req.headers, "idempotency-key": "fuzz-corpus-13" } };
    },
  ],
];

function bare(method: string, path: string): RawRequest {
  return { method, path, headers: { authorization: auth.org } };
}
function json(method: string, path: string, text: string, label?: string): RawRequest {
  return {
    method,
    path,
    headers: {
      authorization: auth.org,
      "content-type": "application/json",
      ...(label ? { "content-encoding": label } : {}),
    },
    body: Buffer.from(text),
  };
}

it.each(corpus)("repro %s: below 500, as documented, nothing written when refused", async (_, operation, req) => {
  const op = operations.find((o) => `${o.method} ${o.path}` === operation);
  expect(op, operation).toBeDefined();
  expect(await judge(op!, req())).toBeUndefined();
});
