import { request } from "node:http";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { AdminKeyGuesses } from "../../../api/auth/admin-key-guesses.ts";
import { createRedisAuth } from "../../../api/auth/api-auth.ts";
import { authConfigSchema } from "../../../api/auth/config.ts";
import { startApi, type RunningServer } from "../../../api/server.ts";
import { createConsole } from "../../../console/console.ts";
import { silentLogger } from "../../../core/logger.ts";
import { createOutboundClient } from "../../../platform/outbound/outbound-fetch.ts";
import { localPolicy } from "../../../core/outbound/policy.ts";
import { connectRedis, redisReady } from "../../../platform/redis-client.ts";
import { devConfigSchema, repoRoot } from "../../../dev/config.ts";
import { loadCrews } from "../../../dev/crew-catalog.ts";
import { LocalExecutions } from "../../../dev/local-executions.ts";
import { startDev, type RunningDev } from "../../../dev/start.ts";
import { uniquePrefix } from "../tokens/support.ts";

// Issue 28 item 6. Twelve wrong secrets for a known client_id locked its owner out of /oauth/token for the window,
// from anywhere (the failures counted against the client_id); wrong admin keys were never limited (400 tries, 400 ×
// 401). Now failures count per (client, address) and per address, and wrong admin keys per address. Each source
// address is a real one: Linux answers all of 127.0.0.0/8 on loopback, so a client bound to 127.0.0.2 is another
// address to the server, with no proxy header involved.

const adminKey = "admin-key-for-guess-limit-tests-0123456789";
const OWNER = "127.0.0.1";
const ATTACKER = "127.0.0.2";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

function send(
  base: string,
  from: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers, localAddress: from }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : {} }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

const basic = (id: string, secret: string) => "Basic " + Buffer.from(`${id}:${secret}`).toString("base64");
const tokenRequest = (base: string, from: string, id: string, secret: string) =>
  send(
    base,
    from,
    "POST",
    "/oauth/token",
    { authorization: basic(id, secret), "content-type": "application/x-www-form-urlencoded" },
    "grant_type=client_credentials",
  );
const adminRequest = (base: string, from: string, key: string) =>
  send(base, from, "GET", "/admin/clients", { "x-admin-key": key });
const consoleSignIn = (base: string, from: string, key: string) =>
  send(
    base,
    from,
    "POST",
    "/console/sign-in",
    { "content-type": "application/json" },
    JSON.stringify({ admin_key: key }),
  );

function expectOAuthLimited(answer: Answer) {
  expect(answer.status).toBe(429);
  expect(answer.body).toEqual({
    error: "temporarily_unavailable",
    error_description: expect.stringMatching(/^Too many token requests; retry after \d+ seconds$/),
  });
  expect(Number(answer.headers["retry-after"])).toBeGreaterThanOrEqual(1);
}

function expectAdminKeyLimited(answer: Answer, windowSeconds: number) {
  expect(answer.status).toBe(429);
  expect(answer.body).toEqual({
    error: "Too Many Requests",
    message: expect.stringMatching(/^Too many wrong admin keys; retry after \d+ seconds$/),
  });
  const retryAfter = Number(answer.headers["retry-after"]);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
}

async function createClient(base: string) {
  const created = await send(
    base,
    OWNER,
    "POST",
    "/admin/clients",
    { "x-admin-key": adminKey, "content-type": "application/json" },
    JSON.stringify({ crews: "*" }),
  );
  expect(created.status).toBe(201);
  return { id: created.body.client_id as string, secret: created.body.client_secret as string };
}

/** The same behaviour from both limiter stores: `kubecrew dev` in memory, and with KUBECREW_REDIS_URL. */
describe.each([
  ["in memory", () => ({})],
  ["in Redis", () => ({ KUBECREW_REDIS_URL: inject("redisUrl"), KUBECREW_REDIS_KEY_PREFIX: uniquePrefix("guesses") })],
])("kubecrew dev with its tokens and token-endpoint limits %s (the default limits)", (_store, storeEnv) => {
  let dev: RunningDev;
  beforeAll(async () => {
    const config = devConfigSchema.parse({ PORT: "0", HOST: "127.0.0.1", KUBECREW_ADMIN_KEY: adminKey, ...storeEnv() });
    dev = await startDev(config, silentLogger());
  });
  afterAll(() => dev?.stop());

  it("another address's wrong secrets do not lock the owner out; the guessing address gets 429", async () => {
    const client = await createClient(dev.url);
    // Twelve failures (60 points at 5 each) used to refuse the client everywhere for the window.
    for (let i = 0; i < 12; i++) {
      expect((await tokenRequest(dev.url, ATTACKER, client.id, `kcs_guess-${i}`)).status).toBe(401);
    }
    expectOAuthLimited(await tokenRequest(dev.url, ATTACKER, client.id, "kcs_guess-12"));
    // Refused before the secret is looked at: the right one from the guessing address learns nothing either.
    expectOAuthLimited(await tokenRequest(dev.url, ATTACKER, client.id, client.secret));

    const owner = await tokenRequest(dev.url, OWNER, client.id, client.secret);
    expect(owner.status).toBe(200);
    expect(owner.body).toMatchObject({ token_type: "Bearer", access_token: expect.stringMatching(/^kca_/) });
  });

  it("keeps a cap per address: guesses spread over many client_ids stop too", async () => {
    const from = "127.0.0.3";
    const answers: number[] = [];
    // 300 points per address, 5 per failure: the 61st failure is refused.
    for (let i = 0; i < 61; i++) answers.push((await tokenRequest(dev.url, from, `client_${i}`, "kcs_guess")).status);
    expect(answers.slice(0, 60)).toEqual(Array(60).fill(401));
    expect(answers[60]).toBe(429);
    const client = await createClient(dev.url);
    expectOAuthLimited(await tokenRequest(dev.url, from, client.id, client.secret));
    expect((await tokenRequest(dev.url, OWNER, client.id, client.secret)).status).toBe(200);
  });

  it("limits wrong admin keys per address, X-Admin-Key and the console's sign-in together: 10 per 10 minutes", async () => {
    const from = "127.0.0.4";
    const answers: number[] = [];
    for (let i = 0; i < 5; i++) answers.push((await adminRequest(dev.url, from, `wrong-key-${i}`)).status);
    for (let i = 0; i < 5; i++) answers.push((await consoleSignIn(dev.url, from, `wrong-key-${i}`)).status);
    expect(answers).toEqual(Array(10).fill(401));
    expectAdminKeyLimited(await adminRequest(dev.url, from, "wrong-key-10"), 600);
    expectAdminKeyLimited(await consoleSignIn(dev.url, from, "wrong-key-11"), 600);
    // Refused before the key is compared: the right key from there is refused too, and nothing was signed in.
    const right = await consoleSignIn(dev.url, from, adminKey);
    expectAdminKeyLimited(right, 600);
    expect(right.headers["set-cookie"]).toBeUndefined();
    expectAdminKeyLimited(await adminRequest(dev.url, from, adminKey), 600);

    // The admin elsewhere is not affected, and right keys are never counted.
    for (let i = 0; i < 15; i++) expect((await adminRequest(dev.url, OWNER, adminKey)).status).toBe(200);
    expect((await consoleSignIn(dev.url, OWNER, adminKey)).status).toBe(200);
  });

  it("400 admin-key guesses get at most 10 answers that are not 429", async () => {
    const from = "127.0.0.5";
    const statuses = await Promise.all(
      Array.from({ length: 400 }, (_, i) => adminRequest(dev.url, from, `guess-${i}`).then((a) => a.status)),
    );
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(390);
  });
});

describe("the crew API as `kubecrew api` wires it: admin-key failures counted in Redis across replicas", () => {
  const prefix = uniquePrefix("admin-key");
  const replicas: RunningServer[] = [];
  let redis: Redis;
  let executions: LocalExecutions;

  beforeAll(async () => {
    redis = connectRedis(inject("redisUrl"), { log: silentLogger() });
    await redisReady(redis);
    executions = new LocalExecutions({
      crews: await loadCrews(`${repoRoot}examples`),
      workRoot: "/tmp",
      runnerCommand: [],
      runnerEnv: {},
      maxTasks: 1,
      log: silentLogger(),
      webhookFetch: createOutboundClient(localPolicy).fetch,
    });
    const config = authConfigSchema.parse({
      KUBECREW_ADMIN_KEY: adminKey,
      KUBECREW_REDIS_KEY_PREFIX: prefix,
      KUBECREW_ADMIN_KEY_FAILURES_PER_IP: "4",
      KUBECREW_ADMIN_KEY_FAILURE_WINDOW_SECONDS: "30",
    });
    // Two replicas on one Redis, each wired as api/start-cluster-api.ts does.
    for (let i = 0; i < 2; i++) {
      const adminKeyGuesses = AdminKeyGuesses.redis(redis, config.adminKeyGuesses, prefix);
      const webConsole = createConsole(
        { sessionTtlSeconds: 3600, adminKey, adminKeyGuesses, fetch: createOutboundClient(localPolicy).fetch },
        silentLogger(),
      );
      const auth = createRedisAuth({
        redis,
        config,
        log: silentLogger(),
        sessions: webConsole.sessions,
        adminKeyGuesses,
      });
      replicas.push(
        await startApi({
          backend: executions,
          tokens: auth.tokens,
          extraRouters: auth.routers,
          extraPaths: auth.paths,
          console: webConsole,
          log: silentLogger(),
          bodyLimitBytes: 1024 * 1024,
          outboundPolicy: localPolicy,
          host: "127.0.0.1",
          port: 0,
        }),
      );
    }
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    await executions?.close();
    redis?.disconnect();
  });

  it("a guess at one replica counts at the other; the limit and its Retry-After hold across them", async () => {
    const [a, b] = replicas.map((r) => r.url) as [string, string];
    expect((await adminRequest(a, ATTACKER, "wrong-1")).status).toBe(401);
    expect((await consoleSignIn(b, ATTACKER, "wrong-2")).status).toBe(401);
    expect((await adminRequest(b, ATTACKER, "wrong-3")).status).toBe(401);
    expect((await consoleSignIn(a, ATTACKER, "wrong-4")).status).toBe(401);
    expectAdminKeyLimited(await adminRequest(a, ATTACKER, "wrong-5"), 30);
    expectAdminKeyLimited(await consoleSignIn(b, ATTACKER, adminKey), 30);
    expect((await adminRequest(b, OWNER, adminKey)).status).toBe(200);
    // The counter is in Redis, under the API's prefix, and expires with its window.
    const keys = await redis.keys(`${prefix}ratelimit:admin-key*`);
    expect(keys).toHaveLength(1);
    const ttl = await redis.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(30_000);
  });
});
