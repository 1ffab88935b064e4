import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
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
import { send, type RawRequest } from "../../support/fuzz/send.ts";
import {
  internalApiKey,
  returnUrl,
  startProviderAndService,
  uniquePrefix,
  type ProviderAndService,
} from "../integrations/harness.ts";

// Property-based requests against the integrations service's routes (issue 12). The service serves no OpenAPI
// document; its routes and answers are the table of integrations/README.md, written out below. Documented requests
// (the internal API key, valid sessions, bodies, providers) and hostile ones (wrong methods, malformed %-escapes, bad
// keys, broken, deep or lying bodies and encodings). Every answer is below 500, one the route documents, a JSON error
// `{error, message}` on the internal API (HTML pages on the browser routes), and a refused request changes no key in
// Redis. Loopback only (the OIDC test provider), a fixed seed and number of runs.

const RUNS = 300;
const SEED = 1213;

interface Route {
  method: string;
  path: string;
  /** Statuses the README documents for the route (405, 400, 413 and 415 apply to every route). */
  answers: number[];
  body?: () => fc.Arbitrary<unknown>;
  browser?: boolean;
}

let service: ProviderAndService;
let redis: Redis;
const prefix = uniquePrefix("fuzz");
const sessions: string[] = [];
const providers = ["google", "microsoft", "hubspot"];
let products: Record<string, string[]> = {};

const connectBody = () =>
  fc.constantFrom(...providers).chain((provider) =>
    fc.record({
      userId: fc.oneof(fc.constant("fuzz-user"), fc.string({ minLength: 1, maxLength: 20 })),
      provider: fc.constant(provider),
      product: fc.constantFrom(...(products[provider] ?? ["none"])),
      returnUrl: fc.oneof(fc.constant(returnUrl), fc.constant(`${returnUrl}?tab=1`)),
    }),
  );

const routes: Route[] = [
  { method: "GET", path: "/health", answers: [200] },
  { method: "GET", path: "/ready", answers: [200] },
  { method: "GET", path: "/v1/connect/{sessionId}", answers: [303, 400, 404], browser: true },
  { method: "GET", path: "/v1/auth/{provider}/callback", answers: [303, 400, 403, 404], browser: true },
  { method: "GET", path: "/v1/internal/providers", answers: [200, 401] },
  { method: "POST", path: "/v1/internal/connect-sessions", answers: [201, 400, 401, 404], body: connectBody },
  { method: "GET", path: "/v1/internal/users/{userId}/connections", answers: [200, 401] },
  { method: "GET", path: "/v1/internal/connections/{id}", answers: [200, 401, 404] },
  { method: "POST", path: "/v1/internal/connections/{id}/access-token", answers: [200, 401, 404, 409] },
  { method: "DELETE", path: "/v1/internal/connections/{id}", answers: [200, 401, 404] },
];

beforeAll(async () => {
  service = await startProviderAndService({ redisUrl: inject("redisUrl"), prefix });
  redis = new Redis(inject("redisUrl"));
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

function pathFor(route: Route, mode: Mode): fc.Arbitrary<string> {
  const parts = route.path.split("/").map((part): fc.Arbitrary<string> => {
    const name = /^\{(.+)\}$/.exec(part)?.[1];
    if (!name) return fc.constant(part);
    const known =
      name === "sessionId"
        ? sessions.length
          ? fc.constantFrom(...sessions)
          : fc.uuid()
        : name === "provider"
          ? fc.constantFrom(...providers)
          : fc.oneof(fc.uuid(), fc.constant("fuzz-user"));
    const valid = fc.oneof(known, fc.string({ minLength: 1, maxLength: 30 }));
    return mode === "documented" ? valid.map(encodeURIComponent) : segment(valid);
  });
  const query =
    route.path.endsWith("/callback") && mode === "documented"
      ? fc
          .record({ code: fc.string({ maxLength: 20 }), state: fc.string({ maxLength: 40 }) })
          .map(({ code, state }) => `?${new URLSearchParams({ code, state })}`)
      : fc.constantFrom("", "?code=x&state=y", "?error=access_denied&state=%ff", "?%zz=1");
  return fc.tuple(fc.tuple(...parts), query).map(([p, q]) => p.join("/") + q);
}

const requestFor = (route: Route, mode: Mode): fc.Arbitrary<{ route: string; req: RawRequest }> =>
  fc
    .record({
      method: mode === "documented" ? fc.constant(route.method) : fc.oneof(fc.constant(route.method), otherMethod),
      path: pathFor(route, mode),
      authorization:
        mode === "documented"
          ? fc.constant(`Bearer ${internalApiKey}`)
          : fc.option(fc.oneof(fc.constant(`Bearer ${internalApiKey}x`), junkHeader), { nil: undefined }),
      body: (route.body && mode === "documented"
        ? fc.record({
            type: fc.constant("application/json"),
            text: route.body().map((v) => JSON.stringify(v)),
            encoding: fc.option(fc.constantFrom<Encoding>(...goodEncodings), { nil: undefined, freq: 3 }),
          })
        : mode === "documented"
          ? fc.constant(undefined)
          : fc.option(
              fc.record({
                type: contentType("application/json"),
                text: route.body
                  ? fc.oneof(
                      route.body().map((v) => JSON.stringify(v)),
                      invalidBody,
                    )
                  : invalidBody,
                encoding,
              }),
              { nil: undefined },
            )) as fc.Arbitrary<{ type: string | undefined; text: string; encoding: Encoding } | undefined>,
      cookie: fc.option(fc.constantFrom("kubecrew_signin=x.y", "kubecrew_signin=%ff", "a=b"), { nil: undefined }),
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
        route: `${route.method} ${route.path}`,
        req: { method, path, headers, ...(bytes ? { body: bytes } : {}) },
      };
    });

const errorBody = new Ajv2020({ allErrors: true }).compile({
  type: "object",
  required: ["error", "message"],
  properties: { error: { type: "string", minLength: 1 }, message: { type: "string", minLength: 1 } },
});

const keys = async () => new Set(await redis.keys(`${prefix}*`));
const seen = new Map<string, number>();

async function judge(route: Route, req: RawRequest): Promise<string | undefined> {
  const before = await keys();
  const answer = await send(service.service.url, req);
  seen.set(
    `${route.method} ${route.path} ${answer.status}`,
    (seen.get(`${route.method} ${route.path} ${answer.status}`) ?? 0) + 1,
  );
  if (answer.status >= 500) return `${answer.status}: ${answer.body.slice(0, 300)}`;
  const sameMethod = req.method === route.method || (req.method === "HEAD" && route.method === "GET");
  const allowed = [...route.answers, 400, 413, 415, ...(sameMethod ? [] : [405, 204])];
  if (!allowed.includes(answer.status))
    return `${answer.status} is not an answer ${route.method} ${route.path} documents`;
  if (answer.status === 405 && !answer.headers["allow"]) return "405 without Allow";
  if (answer.status >= 400 && req.method !== "HEAD") {
    const type = String(answer.headers["content-type"] ?? "");
    if (route.browser && type.startsWith("text/html")) {
      // A page for a person mid-sign-in.
    } else if (!type.startsWith("application/json") || !errorBody(JSON.parse(answer.body))) {
      return `${answer.status} error is not {error, message}: ${type} ${answer.body.slice(0, 200)}`;
    }
  }
  if (answer.status === 201 && route.path.endsWith("/connect-sessions")) {
    sessions.push((JSON.parse(answer.body) as { id: string }).id);
  }
  if (answer.status >= 400) {
    const after = await keys();
    const changed = [...after].filter((k) => !before.has(k)).concat([...before].filter((k) => !after.has(k)));
    if (changed.length) return `a refused request (${answer.status}) changed Redis keys: ${changed.join(", ")}`;
  }
  return undefined;
}

it(`answers ${RUNS} generated requests below 500, as documented, writing nothing when it refuses`, async () => {
  await fc.assert(
    fc.asyncProperty(
      fc
        .tuple(fc.constantFrom(...routes), fc.constantFrom<Mode>("documented", "hostile", "hostile"))
        .chain(([route, mode]) => requestFor(route, mode)),
      async ({ route, req }) => {
        const wrong = await judge(
          routes.find((r) => `${r.method} ${r.path}` === route)!,
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
  // The documented flows were exercised too: sessions created and connect links opened.
  expect(sessions.length).toBeGreaterThan(0);
  expect([...seen.keys()].some((k) => k.startsWith("GET /v1/connect/{sessionId} 303"))).toBe(true);
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
  const route = routes.find((r) => `${r.method} ${r.path}` === name);
  expect(route, name).toBeDefined();
  expect(await judge(route!, req)).toBeUndefined();
});
