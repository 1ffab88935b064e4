import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisTokenStore } from "../../api/auth/redis-token-store.ts";
import { useNamespace } from "../support/cluster.ts";
import { occupyPort, runKubecrew } from "../support/occupied-port.ts";
import { freePort } from "../support/ports.ts";
import { startRedis, type RedisServer } from "../support/redis.ts";
import { waitFor } from "../support/wait-for.ts";

// `kubecrew api` itself (cluster mode: informers on a real kube-apiserver, tokens in a real redis-server), for issue
// 12: a port already in use is one start-up line (item 9), and a SIGSTOPped Redis gets 503 with Retry-After within
// 2 s from the crew API and the token endpoint, /readyz 503, and SIGCONT recovers without a restart.

const ns = useNamespace("api-command");
let redisServer: RedisServer;
const prefix = `test-api-command-${randomUUID().slice(0, 8)}:`;

beforeAll(async () => {
  redisServer = await startRedis();
});
afterAll(async () => {
  redisServer?.resume();
  await redisServer?.stop();
});

const env = (port: number) => ({
  KUBECONFIG: ns.kubeconfigPath,
  POD_NAMESPACE: ns.name,
  KUBECREW_REDIS_URL: redisServer.url,
  KUBECREW_REDIS_KEY_PREFIX: prefix,
  HOST: "127.0.0.1",
  PORT: String(port),
  // A free port: two processes of these tests must not ask for the same default one.
  KUBECREW_API_METRICS_PORT: "0",
  LOG_LEVEL: "warn",
});

it("a port already in use: one line naming PORT, exit status 1", async () => {
  const occupied = await occupyPort();
  try {
    const run = await runKubecrew("api", env(occupied.port));
    expect(run.stderr).toBe(`kubecrew api: port ${occupied.port} is in use (PORT)\n`);
    expect(run.code).toBe(1);
  } finally {
    await occupied.release();
  }
});

it("says which variable to change when the metrics port is in use, in one line", async () => {
  const occupied = await occupyPort();
  try {
    const run = await runKubecrew("api", { ...env(0), KUBECREW_API_METRICS_PORT: String(occupied.port) });
    expect(run.stderr).toBe(`kubecrew api: port ${occupied.port} is in use (KUBECREW_API_METRICS_PORT)\n`);
    expect(run.code).toBe(1);
  } finally {
    await occupied.release();
  }
});

describe("Redis SIGSTOPped under kubecrew api", () => {
  let api: ChildProcess;
  let url: string;
  let orgToken: string;
  /** Never used before the pause: a token verified in the last KUBECREW_TOKEN_CACHE_MS is answered from memory. */
  let unseenToken: string;
  let client: { id: string; secret: string };

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    api = spawn(process.execPath, ["cli/main.ts", "api"], {
      cwd: new URL("../../", import.meta.url).pathname,
      env: { PATH: process.env["PATH"] ?? "", ...env(port) },
      stdio: ["ignore", "ignore", "inherit"],
    });
    await waitFor(
      async () => ((await fetch(`${url}/readyz`).catch(() => undefined))?.ok ? true : undefined),
      60_000,
      200,
    );
    const redis = new Redis(redisServer.url);
    const store = new RedisTokenStore(redis, { prefix });
    orgToken = (await store.createToken({ kind: "org", crews: "*" })).token;
    unseenToken = (await store.createToken({ kind: "org", crews: "*" })).token;
    const created = await store.createClient({ role: "org", crews: "*" });
    client = { id: created.record.clientId, secret: created.clientSecret };
    redis.disconnect();
  });
  afterAll(async () => {
    if (api && api.exitCode === null) {
      api.kill("SIGTERM");
      await once(api, "exit");
    }
  });

  const status = (bearerToken = orgToken) =>
    fetch(`${url}/status/${randomUUID()}`, { headers: { authorization: `Bearer ${bearerToken}` } });
  const token = () =>
    fetch(`${url}/oauth/token`, {
      method: "POST",
      headers: {
        authorization: "Basic " + Buffer.from(`${client.id}:${client.secret}`).toString("base64"),
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials",
    });

  it("serves the web console at /console/ under its Content-Security-Policy, with nobody signed in", async () => {
    const page = await fetch(`${url}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="app.js">');
    const session = await fetch(`${url}/console/session`);
    expect(await session.json()).toEqual({ signed_in: false, sign_in: { admin_key: false, oidc: false } });
    expect(session.headers.get("set-cookie")).toBeNull();
    expect((await fetch(`${url}/console/vendor/hooks.mjs`)).status).toBe(200);
  });

  it("answers 503 with Retry-After within 2 s from the crew API and the token endpoint; SIGCONT recovers", async () => {
    expect((await status()).status).toBe(404); // authenticated: no such execution
    expect((await token()).status).toBe(200);
    redisServer.pause();
    try {
      for (const [name, request] of [
        ["crew API", () => status(unseenToken)],
        ["token endpoint", token],
      ] as const) {
        const started = performance.now();
        const res = await request();
        expect(res.status, name).toBe(503);
        expect(res.headers.get("retry-after"), name).toBe("5");
        expect(performance.now() - started, name).toBeLessThan(2000);
      }
      expect((await fetch(`${url}/readyz`)).status).toBe(503);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      redisServer.resume();
    }
    await waitFor(async () => ((await status()).status === 404 ? true : undefined), 15_000, 100);
    expect((await token()).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect(api.exitCode).toBeNull(); // the same process, not a restart
  });
});
