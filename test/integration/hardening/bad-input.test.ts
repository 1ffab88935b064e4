import { request } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createLogger } from "../../../core/logger.ts";
import {
  capturingLogger,
  internalApiKey,
  type ProviderAndService,
  startProviderAndService,
  uniquePrefix,
} from "../integrations/harness.ts";
import { basic, startTokensDev, type TokensDev } from "../tokens/support.ts";

// Hand-crafted bad input against the crew API, the token endpoint and the integrations service (issue 12, items
// 1, 2, 3 and 8): each is a clear 4xx in the documented body, none is a 500, none is logged above debug.

const deep = (levels: number) =>
  `{"inputs":{"topic":"x"},"meta":{"a":${'{"a":'.repeat(levels)}1${"}".repeat(levels)}}}`;

let api: TokensDev;
const apiLog: string[] = [];
let orgToken: string;
let client: { id: string; secret: string };
let integrations: ProviderAndService;
const integrationsLog = capturingLogger();

beforeAll(async () => {
  const log = createLogger({ level: "info" }, { write: (line: string) => void apiLog.push(line) });
  api = await startTokensDev(inject("redisUrl"), {}, log);
  orgToken = (await api.store.createToken({ kind: "org", crews: "*" })).token;
  const created = await api.store.createClient({ role: "org", crews: "*" });
  client = { id: created.record.clientId, secret: created.clientSecret };
  integrations = await startProviderAndService({
    redisUrl: inject("redisUrl"),
    prefix: uniquePrefix("bad-input"),
    logger: integrationsLog.logger,
  });
});
afterAll(async () => {
  await api?.stop();
  await integrations?.stop();
});

const json = { "content-type": "application/json" };
const auth = () => ({ authorization: `Bearer ${orgToken}` });
/** Any method, TRACE included (fetch refuses to send it). */
function send(url: string, method: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; allow: string | undefined; body: string }>((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, allow: res.headers.allow, body }));
    });
    req.on("error", reject);
    req.end();
  });
}
const errorLines = (lines: string) => lines.split("\n").filter((l) => /"level":(50|60)/.test(l));

describe("deeply nested JSON", () => {
  it("answers 400 naming the limit on every JSON route, for any token holder, without a 500", async () => {
    for (const levels of [65, 2_000, 5_000]) {
      const res = await fetch(`${api.url}/kickoff`, {
        method: "POST",
        headers: { ...json, ...auth() },
        body: deep(levels),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: "Bad Request",
        message: "Request body nests deeper than 64 levels",
      });
    }
    const internal = await fetch(`${integrations.service.url}/v1/internal/connect-sessions`, {
      method: "POST",
      headers: json,
      body: deep(5_000),
    });
    expect(internal.status).toBe(400);
    expect(await internal.json()).toEqual({
      error: "Bad Request",
      message: "Request body nests deeper than 64 levels",
    });
    expect(errorLines(apiLog.join(""))).toEqual([]);
    expect(errorLines(integrationsLog.lines())).toEqual([]);
  });

  it("still accepts nesting up to the limit", async () => {
    const res = await fetch(`${api.url}/kickoff`, { method: "POST", headers: { ...json, ...auth() }, body: deep(60) });
    expect(res.status).toBe(200);
  });
});

describe("malformed percent-escapes in paths", () => {
  it.each(["/status/%ff", "/status/%", "/crews/%/inputs", "/%E0%A4%A/status", "/stop/%zz"])(
    "crew API %s: 400 in the documented body, no token needed, nothing logged above debug",
    async (path) => {
      const res = await fetch(api.url + path, { method: path.startsWith("/stop") ? "POST" : "GET" });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: "Bad Request", message: "The request path has a malformed %-escape" });
      expect(errorLines(apiLog.join(""))).toEqual([]);
    },
  );

  it.each(["/v1/connect/%ff", "/v1/auth/%ff/callback", "/v1/internal/connections/%ff"])(
    "integrations %s: 400, nothing logged above debug",
    async (path) => {
      const res = await fetch(integrations.service.url + path, {
        headers: { authorization: `Bearer ${internalApiKey}` },
      });
      expect(res.status).toBe(400);
      expect(errorLines(integrationsLog.lines())).toEqual([]);
    },
  );
});

describe("bodies labelled with an encoding they do not have", () => {
  const notGzip = Buffer.from('{"inputs":{"topic":"x"}}');

  it("crew API: 400 for an undecodable gzip/br body, 415 for an unknown encoding, and real gzip works", async () => {
    for (const encoding of ["gzip", "br", "deflate"]) {
      const res = await fetch(`${api.url}/kickoff`, {
        method: "POST",
        headers: { ...json, ...auth(), "content-encoding": encoding },
        body: notGzip,
      });
      expect(res.status, encoding).toBe(400);
      expect(await res.json()).toEqual({
        error: "Bad Request",
        message: `Request body is not valid ${encoding} data`,
      });
    }
    const unknown = await fetch(`${api.url}/kickoff`, {
      method: "POST",
      headers: { ...json, ...auth(), "content-encoding": "compress" },
      body: notGzip,
    });
    expect(unknown.status).toBe(415);
    const real = await fetch(`${api.url}/kickoff`, {
      method: "POST",
      headers: { ...json, ...auth(), "content-encoding": "gzip" },
      body: gzipSync(notGzip),
    });
    expect(real.status).toBe(200);
    expect(errorLines(apiLog.join(""))).toEqual([]);
  });

  it("token endpoint: invalid_request, uncached", async () => {
    const res = await fetch(`${api.url}/oauth/token`, {
      method: "POST",
      headers: {
        authorization: basic(client.id, client.secret),
        "content-type": "application/x-www-form-urlencoded",
        "content-encoding": "gzip",
      },
      body: "grant_type=client_credentials",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: "invalid_request",
      error_description: "Request body is not valid gzip data",
    });
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(errorLines(apiLog.join(""))).toEqual([]);
  });

  it("integrations: 400 even without a key", async () => {
    const res = await fetch(`${integrations.service.url}/v1/internal/connect-sessions`, {
      method: "POST",
      headers: { ...json, "content-encoding": "gzip" },
      body: notGzip,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "Bad Request", message: "Request body is not valid gzip data" });
    expect(errorLines(integrationsLog.lines())).toEqual([]);
  });
});

describe("wrong methods", () => {
  it.each([
    ["TRACE", "/inputs", "GET"],
    ["DELETE", "/kickoff", "POST"],
    ["PUT", "/crews/research/kickoff", "POST"],
    ["POST", "/status/00000000-0000-4000-8000-000000000000", "GET"],
    ["GET", "/stop/00000000-0000-4000-8000-000000000000", "POST"],
    ["POST", "/openapi.json", "GET"],
    ["DELETE", "/readyz", "GET"],
  ])("crew API %s %s: 405 with Allow, naming the method to use", async (method, path, use) => {
    const res = await send(api.url + path, method, auth());
    expect(res.status).toBe(405);
    expect(res.allow).toBe(use === "GET" ? "GET, HEAD" : use);
    expect(JSON.parse(res.body)).toEqual({ error: "Method Not Allowed", message: `Use ${use} for ${path}` });
  });

  it("answers OPTIONS with the allowed methods", async () => {
    const res = await fetch(`${api.url}/kickoff`, { method: "OPTIONS" });
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("POST");
  });

  it.each([
    ["POST", "/health", "GET, HEAD"],
    ["PUT", "/v1/internal/connect-sessions", "POST"],
    ["PATCH", "/v1/internal/connections/c1", "GET, DELETE, HEAD"],
  ])("integrations %s %s: 405 with Allow: %s", async (method, path, allow) => {
    const res = await fetch(integrations.service.url + path, {
      method,
      headers: { authorization: `Bearer ${internalApiKey}` },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe(allow);
    expect(((await res.json()) as { error: string }).error).toBe("Method Not Allowed");
  });

  it("a wrong method answers the same shape from an integrations route and a crew API route (one helper, one mapper)", async () => {
    const shape = async (res: Response, path: string) => ({
      status: res.status,
      contentType: res.headers.get("content-type"),
      allow: res.headers.get("allow"),
      body: JSON.stringify(await res.json()).replace(path, "<path>"),
    });
    const fromIntegrations = await fetch(`${integrations.service.url}/health`, { method: "POST" });
    const fromApi = await fetch(`${api.url}/healthz`, { method: "POST" });
    const seen = [await shape(fromIntegrations, "/health"), await shape(fromApi, "/healthz")];
    expect(seen[0]).toEqual({
      status: 405,
      contentType: "application/json; charset=utf-8",
      allow: "GET, HEAD",
      body: JSON.stringify({ error: "Method Not Allowed", message: "Use GET for <path>" }),
    });
    expect(seen[1]).toEqual(seen[0]);
  });
});
