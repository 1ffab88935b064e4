import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../support/redis.ts";
import { basic, bearer, startTokensDev, tokenRequest, waitFor, type TokensDev } from "./support.ts";

const adminKey = "outage-admin-key-0123456789abcdef0123";

describe("Redis outages", () => {
  let redisServer: RedisServer;
  let api: TokensDev;
  let orgToken: string;
  let client: { id: string; secret: string };

  beforeAll(async () => {
    redisServer = await startRedis();
    api = await startTokensDev(redisServer.url, {
      KUBECREW_ADMIN_KEY: adminKey,
      KUBECREW_REDIS_COMMAND_TIMEOUT_MS: "300",
      // Long enough that a token used just before a pause is still remembered when the test asks again.
      KUBECREW_TOKEN_CACHE_MS: "10000",
    });
    orgToken = (await api.store.createToken({ kind: "org", crews: "*" })).token;
    const created = await api.store.createClient({ role: "org", crews: "*" });
    client = { id: created.record.clientId, secret: created.clientSecret };
  });
  afterAll(async () => {
    await api?.stop();
    await redisServer?.stop();
  });

  const inputs = () => fetch(`${api.url}/inputs`, { headers: bearer(orgToken) });

  it("fails closed with 503 and a clear body while Redis is stopped, and recovers by itself when it returns", async () => {
    expect((await inputs()).status).toBe(200);
    const before = await tokenRequest(api.url, { authorization: basic(client.id, client.secret) });
    expect(before.status).toBe(200);
    const accessToken = before.body.access_token as string;

    await api.redis.save(); // the chart's Redis persists with AOF; the test server keeps what SAVE wrote
    await redisServer.stop();

    const started = Date.now();
    const down = await inputs();
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({
      error: "Service Unavailable",
      message: "Authentication is temporarily unavailable; try again shortly",
    });
    expect(down.headers.get("retry-after")).toBe("5");
    expect((await fetch(`${api.url}/inputs`, { headers: bearer(accessToken) })).status).toBe(503);

    const token = await tokenRequest(api.url, { authorization: basic(client.id, client.secret) });
    expect(token.status).toBe(503);
    expect(token.body).toEqual({
      error: "temporarily_unavailable",
      error_description: "The token service cannot reach its store; retry shortly",
    });
    expect(token.headers.get("retry-after")).toBe("5");
    expect(token.headers.get("cache-control")).toBe("no-store");
    expect(token.headers.get("pragma")).toBe("no-cache");

    const admin = await fetch(`${api.url}/admin/tokens`, { headers: { "x-admin-key": adminKey } });
    expect(admin.status).toBe(503);
    expect(await admin.json()).toEqual({
      error: "Service Unavailable",
      message: "The token store is unreachable; try again shortly",
    });
    // Nobody waits for a Redis that is not there.
    expect(Date.now() - started).toBeLessThan(3000);
    // A request without a token needs no store: still a plain 401.
    expect((await fetch(`${api.url}/inputs`)).status).toBe(401);

    await redisServer.start();
    // The same API process, never restarted: the next requests succeed once the client has reconnected.
    await waitFor(async () => ((await inputs()).status === 200 ? true : undefined), 15_000, 100);
    expect((await fetch(`${api.url}/inputs`, { headers: bearer(accessToken) })).status).toBe(200);
    const after = await tokenRequest(api.url, { authorization: basic(client.id, client.secret) });
    expect(after.status).toBe(200);
    expect((await fetch(`${api.url}/inputs`, { headers: bearer(after.body.access_token as string) })).status).toBe(200);
  });

  it("answers 503 within the command timeout when Redis is up but not answering (but for a token verified a moment ago), then 200 again", async () => {
    await waitFor(async () => ((await inputs()).status === 200 ? true : undefined), 15_000, 100);
    const unseen = (await api.store.createToken({ kind: "org", crews: "*" })).token;
    const operator = new Redis(redisServer.url);
    try {
      await operator.call("CLIENT", "PAUSE", "3000", "ALL");
      // A token the API verified a moment ago is answered from its memory (nothing can be revoked while Redis
      // does not answer); any other waits for Redis, which does not answer: 503.
      expect((await inputs()).status).toBe(200);
      const started = Date.now();
      const stalled = await fetch(`${api.url}/inputs`, { headers: bearer(unseen) });
      expect(stalled.status).toBe(503);
      expect(Date.now() - started).toBeLessThan(2500); // the 300 ms command timeout, not the 3 s pause
      const token = await tokenRequest(api.url, { authorization: basic(client.id, client.secret) });
      expect(token.status).toBe(503);
      expect(token.body.error).toBe("temporarily_unavailable");
      await waitFor(async () => ((await inputs()).status === 200 ? true : undefined), 10_000, 100);
    } finally {
      operator.disconnect();
    }
  });
});
