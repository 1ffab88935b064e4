import fc from "fast-check";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
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
  type Encoding,
} from "../../support/fuzz/request-parts.ts";
import { valuesOf } from "../../support/fuzz/schema-arbitrary.ts";
import { send, type RawRequest } from "../../support/fuzz/send.ts";
import {
  internalApiKey,
  returnUrl,
  startProviderAndService,
  uniquePrefix,
  type ProviderAndService,
} from "../integrations/harness.ts";

// Property-based requests generated from the integrations service's served OpenAPI document (issue 12): documented
// requests (the internal API key, valid sessions, bodies from the request schemas, providers) and hostile ones (wrong
// methods, malformed %-escapes, bad keys, broken, deep or lying bodies and encodings). Every answer is below 500 and
// matches the document (status listed for the operation, a JSON body valid for its schema with ajv, HTML pages where
// the browser routes list them, required headers present), and a refused request changes no key in Redis. Loopback
// only (the OIDC test provider), a fixed seed and number of runs.

const RUNS = 300;
const SEED = 1213;

let service: ProviderAndService;
let redis: Redis;
let doc: OpenApiDocument;
let operations: Operation[];
let check: ReturnType<typeof answerChecker>;
const prefix = uniquePrefix("fuzz");
const sessions: string[] = [];
const providers = ["google", "microsoft", "hubspot"];
let products: Record<string, string[]> = {};

/** Connect requests a caller that read GET /v1/internal/providers sends: sessions whose links really open. */
const knownConnectBody = () =>
  fc.constantFrom(...providers).chain((provider) =>
    fc.record({
      userId: fc.oneof(fc.constant("fuzz-user"), fc.string({ minLength: 1, maxLength: 20 })),
      provider: fc.constant(provider),
      product: fc.constantFrom(...(products[provider] ?? ["none"])),
      returnUrl: fc.oneof(fc.constant(returnUrl), fc.constant(`${returnUrl}?tab=1`)),
    }),
  );

beforeAll(async () => {
  service = await startProviderAndService({
    redisUrl: inject("redisUrl"),
    prefix,
    // /v1/mcp checks app credentials (and refuses the fuzzer's with 401) only with a signing key.
    extra: { KUBECREW_APPS_SIGNING_KEY: "apps-signing-key-for-fuzzing-0123456789abcdef" },
  });
  redis = new Redis(inject("redisUrl"));
  doc = (await (await fetch(`${service.service.url}/openapi.json`)).json()) as OpenApiDocument;
  operations = operationsOf(doc);
  check = answerChecker(doc);
  const listed = (await (
    await fetch(`${service.service.url}/v1/internal/providers`, {
      headers: { authorization: `Bearer ${internalApiKey}` },
    })
  ).json()) as { providers: { id: string; products: { id: string }[] }[] };
  products = Object.fromEntries(listed.providers.map((p) => [p.id, p.products.map((x) => x.id)]));
});
afterAll(async () => {
  redis?.disconnect();
  await service?.stop();
});

type Mode = "documented" | "hostile";

function pathFor(op: Operation, mode: Mode): fc.Arbitrary<string> {
  const parts = op.path.split("/").map((part): fc.Arbitrary<string> => {
    const name = /^\{(.+)\}$/.exec(part)?.[1];
    if (!name) return fc.constant(part);
    const schema = op.parameters?.find((p) => p.name === name && p.in === "path")?.schema ?? { type: "string" };
    const known =
      name === "sessionId"
        ? sessions.length
          ? fc.constantFrom(...sessions)
          : fc.uuid()
        : name === "provider"
          ? fc.constantFrom(...providers)
          : fc.oneof(fc.uuid(), fc.constant("fuzz-user"));
    const valid = fc.oneof(known, valuesOf(schema, doc.components.schemas) as fc.Arbitrary<string>);
    return mode === "documented" ? valid.map(encodeURIComponent) : segment(valid);
  });
  const queryNames = (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
  const query =
    queryNames.length && mode === "documented"
      ? fc
          .record(Object.fromEntries(queryNames.map((n) => [n, fc.string({ maxLength: 30 })])), {
            requiredKeys: [],
          })
          .map((q) => {
            const text = new URLSearchParams(q as Record<string, string>).toString();
            return text ? `?${text}` : "";
          })
      : fc.constantFrom("", "?code=x&state=y", "?error=access_denied&state=%ff", "?%zz=1");
  return fc.tuple(fc.tuple(...parts), query).map(([p, q]) => p.join("/") + q);
}

type Body = { type: string | undefined; text: string; encoding?: Encoding };

function bodyFor(op: Operation, mode: Mode): fc.Arbitrary<Body | undefined> {
  const media = op.requestBody?.content["application/json"];
  if (!media) {
    if (mode === "documented") return fc.constant(undefined);
    return fc.option(fc.record({ type: contentType("application/json"), text: invalidBody, encoding }), {
      nil: undefined,
    });
  }
  const generated = valuesOf(media.schema, doc.components.schemas);
  const valid = (op.operationId === "createConnectSession" ? fc.oneof(generated, knownConnectBody()) : generated).map(
    (v) => JSON.stringify(v),
  );
  if (mode === "documented") {
    return fc.record({
      type: fc.constant("application/json"),
      text: valid,
      encoding: fc.option(fc.constantFrom<Encoding>(...goodEncodings), { nil: undefined, freq: 3 }),
    });
  }
  return fc.option(fc.record({ type: contentType("application/json"), text: fc.oneof(valid, invalidBody), encoding }), {
    nil: undefined,
  });
}

const requestFor = (op: Operation, mode: Mode): fc.Arbitrary<{ operation: string; req: RawRequest }> =>
  fc
    .record({
      method: mode === "documented" ? fc.constant(op.method) : fc.oneof(fc.constant(op.method), otherMethod),
      path: pathFor(op, mode),
      authorization:
        mode === "documented"
          ? fc.constant(`Bearer ${internalApiKey}`)
          : fc.option(fc.oneof(fc.constant(`Bearer ${internalApiKey}x`), junkHeader), { nil: undefined }),
      body: bodyFor(op, mode),
      cookie: fc.option(fc.constantFrom("kubecrew_oauth_signin=x.y", "kubecrew_oauth_signin=%ff", "a=b"), {
        nil: undefined,
      }),
    })
    .map(({ method, path, authorization, body, cookie }) => {
      const headers: Record<string, string> = {};
      if (authorization !== undefined) headers["authorization"] = authorization;
      if (cookie && mode === "hostile") headers["cookie"] = cookie;
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

const keys = async () => new Set(await redis.keys(`${prefix}*`));
/** How often each operation answered each status, to show what the run covered. */
const seen = new Map<string, number>();

/** What is wrong with the answer to `req` (undefined when nothing is), writes included. */
async function judge(op: Operation, req: RawRequest): Promise<string | undefined> {
  const before = await keys();
  const answer = await send(service.service.url, req);
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
  if (answer.status === 201 && op.operationId === "createConnectSession" && req.method === "POST") {
    sessions.push((JSON.parse(answer.body) as { id: string }).id);
  }
  if (answer.status >= 400) {
    const after = await keys();
    const changed = [...after].filter((k) => !before.has(k)).concat([...before].filter((k) => !after.has(k)));
    if (changed.length) return `a refused request (${answer.status}) changed Redis keys: ${changed.join(", ")}`;
  }
  return undefined;
}

it(`answers ${RUNS} requests generated from the served document below 500, as documented, writing nothing when it refuses`, async () => {
  await fc.assert(
    fc.asyncProperty(
      fc
        .tuple(fc.constantFrom(...operations), fc.constantFrom<Mode>("documented", "hostile", "hostile"))
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
  // FUZZ_REPORT=1 prints how often each operation answered each status.
  if (process.env["FUZZ_REPORT"])
    console.log(
      [...seen]
        .sort()
        .map(([k, n]) => `${k}: ${n}`)
        .join("\n"),
    );
  // Every documented operation was tried, and the documented flows were exercised: sessions created, links opened.
  expect(new Set([...seen.keys()].map((k) => k.split(" ")[0]))).toEqual(
    new Set(operations.map((op) => op.operationId)),
  );
  expect(sessions.length).toBeGreaterThan(0);
  expect([...seen.keys()]).toEqual(
    expect.arrayContaining(["openConnectLink 303", "listProviders 200", "getConnection 404"]),
  );
}, 60_000);

/** The repros against the integrations service (2 and 3, 1 and 8 too), through the same checks. */
const key = { authorization: `Bearer ${internalApiKey}` };
const corpus: [string, string, RawRequest][] = [
  ["2 connect %ff", "GET /v1/connect/{sessionId}", { method: "GET", path: "/v1/connect/%ff", headers: {} }],
  ["2 callback %ff", "GET /v1/auth/{provider}/callback", { method: "GET", path: "/v1/auth/%ff/callback", headers: {} }],
  [
    "2 connection %ff",
    "GET /v1/internal/connections/{id}",
    { method: "GET", path: "/v1/internal/connections/%ff", headers: key },
  ],
  ...[key, {}].map((headers): [string, string, RawRequest] => [
    `3 gzip label${"authorization" in headers ? "" : ", no key"}`,
    "POST /v1/internal/connect-sessions",
    {
      method: "POST",
      path: "/v1/internal/connect-sessions",
      headers: { ...headers, "content-type": "application/json", "content-encoding": "gzip" },
      body: Buffer.from('{"userId":"u"}'),
    },
  ]),
  [
    "1 deep JSON",
    "POST /v1/internal/connect-sessions",
    {
      method: "POST",
      path: "/v1/internal/connect-sessions",
      headers: { ...key, "content-type": "application/json" },
      body: Buffer.from(`{"a":${"[".repeat(5000)}${"]".repeat(5000)}}`),
    },
  ],
  ["8 TRACE", "GET /health", { method: "TRACE", path: "/health", headers: {} }],
];

it.each(corpus)("repro %s: below 500, as documented, nothing written when refused", async (_, name, req) => {
  const op = operations.find((o) => `${o.method} ${o.path}` === name);
  expect(op, name).toBeDefined();
  expect(await judge(op!, req)).toBeUndefined();
});
