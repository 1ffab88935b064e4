import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../support/redis.ts";
import { waitFor } from "../../support/wait-for.ts";
import {
  internalApiKey,
  type ProviderAndService,
  startProviderAndService,
  uniquePrefix,
} from "../integrations/harness.ts";
import { basic, bearer, startTokensDev, type TokensDev } from "../tokens/support.ts";

// A hung Redis (SIGSTOP: connections stay open, nothing answers) and a stopped one, under every service that uses
// Redis: the crew API's bearer auth, the token endpoint and the integrations service. Each answers 503 with
// Retry-After within 2 s, readiness is 503 meanwhile, and all recover without a restart.

let redisServer: RedisServer;
let api: TokensDev;
let integrations: ProviderAndService;
let orgToken: string;
let client: { id: string; secret: string };

beforeAll(async () => {
  redisServer = await startRedis();
  api = await startTokensDev(redisServer.url);
  orgToken = (await api.store.createToken({ kind: "org", crews: "*" })).token;
  const created = await api.store.createClient({ role: "org", crews: "*" });
  client = { id: created.record.clientId, secret: created.clientSecret };
  integrations = await startProviderAndService({ redisUrl: redisServer.url, prefix: uniquePrefix("redis-hung") });
});
afterAll(async () => {
  redisServer?.resume();
  await api?.stop();
  await integrations?.stop();
  await redisServer?.stop();
});

const timed = async (request: () => Promise<Response>) => {
  const started = performance.now();
  const res = await request();
  return { res, ms: performance.now() - started };
};
const crewInputs = (bearerToken = orgToken) => fetch(`${api.url}/inputs`, { headers: bearer(bearerToken) });
// A token this API replica has not verified yet: one it verified in the last KUBECREW_TOKEN_CACHE_MS is answered from
// its memory while Redis hangs (redis-outage.test.ts), so the outage is checked with a token it must ask Redis about.
const unseenToken = async () => (await api.store.createToken({ kind: "org", crews: "*" })).token;
const token = () =>
  fetch(`${api.url}/oauth/token`, {
    method: "POST",
    headers: {
      authorization: basic(client.id, client.secret),
      "content-type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
const connections = () =>
  fetch(`${integrations.service.url}/v1/internal/users/u1/connections`, {
    headers: { authorization: `Bearer ${internalApiKey}` },
  });

async function expectAllUnavailable(crewToken: string) {
  for (const [name, request] of [
    ["crew API", () => crewInputs(crewToken)],
    ["token endpoint", token],
    ["integrations", connections],
  ] as const) {
    const { res, ms } = await timed(request);
    expect(res.status, name).toBe(503);
    expect(res.headers.get("retry-after"), name).toBe("5");
    expect(ms, name).toBeLessThan(2000);
  }
  expect((await fetch(`${api.url}/readyz`)).status).toBe(503);
  expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${integrations.service.url}/ready`)).status).toBe(503);
}

async function expectAllRecovered() {
  await waitFor(async () => ((await crewInputs()).status === 200 ? true : undefined), 15_000, 100);
  await waitFor(async () => ((await connections()).status === 200 ? true : undefined), 15_000, 100);
  expect((await token()).status).toBe(200);
  expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
  expect((await fetch(`${integrations.service.url}/ready`)).status).toBe(200);
}

describe("Redis hung or down", () => {
  it("answers 200 while Redis is up", async () => {
    expect((await crewInputs()).status).toBe(200);
    expect((await token()).status).toBe(200);
    expect((await connections()).status).toBe(200);
    expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
  });

  it("SIGSTOPped: 503 with Retry-After within 2 s from every service; SIGCONT recovers without restart", async () => {
    const crewToken = await unseenToken();
    redisServer.pause();
    try {
      await expectAllUnavailable(crewToken);
    } finally {
      redisServer.resume();
    }
    await expectAllRecovered();
  });

  it("shut down: 503 with Retry-After within 2 s from every service; recovers when it returns", async () => {
    const crewToken = await unseenToken();
    await api.redis.save(); // the restarted test server loads what SAVE wrote (the chart's Redis keeps AOF)
    await redisServer.stop();
    try {
      await expectAllUnavailable(crewToken);
    } finally {
      await redisServer.start();
    }
    await expectAllRecovered();
  });
});
