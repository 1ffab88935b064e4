import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createRedisAuth } from "../../../api/auth/api-auth.ts";
import { authConfigSchema } from "../../../api/auth/config.ts";
import { connectRedis, redisReady } from "../../../platform/redis-client.ts";
import { startApi, type RunningServer } from "../../../api/server.ts";
import { silentLogger } from "../../../core/logger.ts";
import { loadCrews } from "../../../dev/crew-catalog.ts";
import { repoRoot } from "../../../dev/config.ts";
import { LocalExecutions } from "../../../dev/local-executions.ts";
import type { ManagedTokenStore } from "../../../api/auth/token-store.ts";
import { basic, sleep, startTokensDev, tokenRequest, uniquePrefix, type TokensDev } from "./support.ts";
import { createOutboundClient } from "../../../platform/outbound/outbound-fetch.ts";
import { localPolicy } from "../../../core/outbound/policy.ts";

function expectRateLimited(res: Awaited<ReturnType<typeof tokenRequest>>, windowSeconds: number) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    error: "temporarily_unavailable",
    error_description: expect.stringMatching(/^Too many token requests; retry after \d+ seconds$/),
  });
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("pragma")).toBe("no-cache");
  return retryAfter;
}

describe("per-client limit", () => {
  let api: TokensDev;
  beforeAll(async () => {
    api = await startTokensDev(inject("redisUrl"), {
      KUBECREW_OAUTH_RATE_LIMIT_PER_CLIENT: "3",
      // Long enough that a slow CI machine sends each test's requests within one window.
      KUBECREW_OAUTH_RATE_LIMIT_WINDOW_SECONDS: "4",
      KUBECREW_OAUTH_FAILED_AUTH_COST: "3",
    });
  });
  afterAll(() => api?.stop());

  it("answers 429 with Retry-After past the limit, leaves other clients alone, and lets the next window through", async () => {
    const limited = await api.store.createClient({ role: "org", crews: "*" });
    const other = await api.store.createClient({ role: "org", crews: "*" });
    const auth = basic(limited.record.clientId, limited.clientSecret);
    for (let i = 0; i < 3; i++) expect((await tokenRequest(api.url, { authorization: auth })).status).toBe(200);
    const refused = await tokenRequest(api.url, { authorization: auth });
    const retryAfter = expectRateLimited(refused, 4);
    expect(
      (await tokenRequest(api.url, { authorization: basic(other.record.clientId, other.clientSecret) })).status,
    ).toBe(200);

    await sleep(retryAfter * 1000 + 100);
    expect((await tokenRequest(api.url, { authorization: auth })).status).toBe(200);
  });

  it("counts a failed authentication as several requests (brute-force protection)", async () => {
    const client = await api.store.createClient({ role: "org", crews: "*" });
    const wrong = await tokenRequest(api.url, { authorization: basic(client.record.clientId, "kcs_guess") });
    expect(wrong.status).toBe(401);
    // The failure cost 3 of the 3 points: even the right secret must now wait for the next window.
    expectRateLimited(
      await tokenRequest(api.url, { authorization: basic(client.record.clientId, client.clientSecret) }),
      4,
    );

    // Guessing stops after the first try per window, however many guesses are sent.
    const guesses = await Promise.all(
      Array.from({ length: 10 }, () =>
        tokenRequest(api.url, { authorization: basic(client.record.clientId, "kcs_guess") }),
      ),
    );
    expect(guesses.filter((g) => g.status === 401).length).toBeLessThanOrEqual(1);
    expect(guesses.filter((g) => g.status === 429).length).toBeGreaterThanOrEqual(9);
  });
});

describe("per-source-address limit", () => {
  let server: RunningServer;
  let redis: Redis;
  let store: ManagedTokenStore;
  let executions: LocalExecutions;

  beforeAll(async () => {
    // The crew API as `kubecrew api` wires it: createRedisAuth, behind one proxy hop (the Ingress).
    redis = connectRedis(inject("redisUrl"), { log: silentLogger() });
    await redisReady(redis);
    const config = authConfigSchema.parse({
      KUBECREW_REDIS_KEY_PREFIX: uniquePrefix("ip"),
      KUBECREW_OAUTH_RATE_LIMIT_PER_IP: "4",
      KUBECREW_OAUTH_RATE_LIMIT_WINDOW_SECONDS: "30",
    });
    const auth = createRedisAuth({ redis, config, log: silentLogger() });
    store = auth.tokens;
    executions = new LocalExecutions({
      crews: await loadCrews(`${repoRoot}examples`),
      workRoot: "/tmp",
      runnerCommand: [],
      runnerEnv: {},
      maxTasks: 1,
      log: silentLogger(),
      webhookFetch: createOutboundClient(localPolicy).fetch,
    });
    server = await startApi({
      backend: executions,
      tokens: auth.tokens,
      extraRouters: auth.routers,
      extraPaths: auth.paths,
      trustProxy: 1,
      log: silentLogger(),
      bodyLimitBytes: 1024 * 1024,
      outboundPolicy: localPolicy,
      host: "127.0.0.1",
      port: 0,
    });
  });
  afterAll(async () => {
    await server?.stop();
    executions?.close();
    redis?.disconnect();
  });

  const from = (address: string) => ({ "x-forwarded-for": address });

  it("limits each client address named by the trusted proxy, whatever client_id it uses", async () => {
    const clients = await Promise.all([1, 2, 3, 4, 5].map(() => store.createClient({ role: "org", crews: "*" })));
    for (const c of clients.slice(0, 4)) {
      const res = await tokenRequest(server.url, {
        authorization: basic(c.record.clientId, c.clientSecret),
        headers: from("203.0.113.7"),
      });
      expect(res.status).toBe(200);
    }
    const last = clients[4]!;
    const auth = basic(last.record.clientId, last.clientSecret);
    expectRateLimited(await tokenRequest(server.url, { authorization: auth, headers: from("203.0.113.7") }), 30);
    expect((await tokenRequest(server.url, { authorization: auth, headers: from("203.0.113.8") })).status).toBe(200);
  });

  it("weighs failed authentications from an address heavier", async () => {
    const client = await store.createClient({ role: "org", crews: "*" });
    const wrong = await tokenRequest(server.url, {
      authorization: basic(client.record.clientId, "nope"),
      headers: from("198.51.100.1"),
    });
    expect(wrong.status).toBe(401);
    expectRateLimited(
      await tokenRequest(server.url, {
        authorization: basic(client.record.clientId, client.clientSecret),
        headers: from("198.51.100.1"),
      }),
      30,
    );
  });

  it("counts an IPv6 /64 as one address", async () => {
    const clients = await Promise.all([1, 2, 3, 4, 5, 6].map(() => store.createClient({ role: "org", crews: "*" })));
    for (let i = 0; i < 4; i++) {
      const c = clients[i]!;
      const res = await tokenRequest(server.url, {
        authorization: basic(c.record.clientId, c.clientSecret),
        headers: from(`2001:db8:1:2::${i + 1}`),
      });
      expect(res.status).toBe(200);
    }
    const fifth = clients[4]!;
    const sixth = clients[5]!;
    expectRateLimited(
      await tokenRequest(server.url, {
        authorization: basic(fifth.record.clientId, fifth.clientSecret),
        headers: from("2001:db8:1:2:ffff:ffff:ffff:ffff"),
      }),
      30,
    );
    const otherNet = await tokenRequest(server.url, {
      authorization: basic(sixth.record.clientId, sixth.clientSecret),
      headers: from("2001:db8:1:3::1"),
    });
    expect(otherNet.status).toBe(200);
  });
});

describe("without a trusted proxy", () => {
  it("ignores X-Forwarded-For, so a client cannot dodge the limit by forging it", async () => {
    const api = await startTokensDev(inject("redisUrl"), { KUBECREW_OAUTH_RATE_LIMIT_PER_IP: "3" });
    try {
      const client = await api.store.createClient({ role: "org", crews: "*" });
      const auth = basic(client.record.clientId, client.clientSecret);
      for (let i = 0; i < 3; i++) {
        expect(
          (await tokenRequest(api.url, { authorization: auth, headers: { "x-forwarded-for": `192.0.2.${i}` } })).status,
        ).toBe(200);
      }
      expectRateLimited(
        await tokenRequest(api.url, { authorization: auth, headers: { "x-forwarded-for": "192.0.2.99" } }),
        60,
      );
    } finally {
      await api.stop();
    }
  });
});
