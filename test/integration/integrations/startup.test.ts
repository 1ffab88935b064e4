import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startRedis, freePort, type RedisServer } from "../../support/redis.ts";
import { launchIntegrationsCommand } from "./command-process.ts";
import { internalApiKey, integrationsEnv, startIntegrations, uniquePrefix } from "./harness.ts";

describe("startup", () => {
  const redisUrl = inject("redisUrl");
  let privateRedis: RedisServer;

  beforeAll(async () => {
    privateRedis = await startRedis();
  });
  afterAll(async () => {
    await privateRedis?.stop();
  });

  const env = async (extra: Record<string, string> = {}) =>
    integrationsEnv({
      issuer: "http://127.0.0.1:9",
      publicUrl: "https://app.example.com/oauthsvc",
      redisUrl,
      port: await freePort(),
      prefix: uniquePrefix("startup"),
      extra,
    });

  it.each([
    ["too short", "ab".repeat(31)],
    ["not hexadecimal", "g".repeat(64)],
    ["empty", ""],
  ])("stops with one clear line when KUBECREW_OAUTH_DB_ENCRYPTION_KEY is %s", async (_, key) => {
    const { code, stdout, stderr } = await launchIntegrationsCommand({
      ...(await env()),
      KUBECREW_OAUTH_DB_ENCRYPTION_KEY: key,
    }).done;
    expect(code).toBe(1);
    expect(stdout).toBe("");
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^kubecrew integrations: Invalid configuration: KUBECREW_OAUTH_DB_ENCRYPTION_KEY: (must be exactly 64 hexadecimal characters|is required)/,
    );
  });

  it("stops with one clear line when KUBECREW_OAUTH_DB_ENCRYPTION_KEY is missing", async () => {
    const withoutKey: Record<string, string> = await env();
    delete withoutKey["KUBECREW_OAUTH_DB_ENCRYPTION_KEY"];
    const { code, stderr } = await launchIntegrationsCommand(withoutKey).done;
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(
      "kubecrew integrations: Invalid configuration: KUBECREW_OAUTH_DB_ENCRYPTION_KEY: is required (64 hexadecimal characters; generate one with `openssl rand -hex 32`)",
    );
  });

  it("starts with a good key, serves /health, stops on SIGTERM, and logs no secret", async () => {
    const port = await freePort();
    const settings = {
      ...(await env()),
      KUBECREW_INTEGRATIONS_PORT: String(port),
      KUBECREW_INTEGRATIONS_HOST: "127.0.0.1",
    };
    const { child, done } = launchIntegrationsCommand(settings);
    let health: unknown;
    for (let i = 0; i < 100 && !health; i++) {
      health = await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.json(),
        () => undefined,
      );
      if (!health) await new Promise((r) => setTimeout(r, 100));
    }
    expect(health).toEqual({ status: "ok", store: "redis", redis: "reachable" });
    await fetch(`http://127.0.0.1:${port}/v1/internal/providers`, {
      headers: { authorization: `Bearer ${settings.KUBECREW_OAUTH_INTERNAL_API_KEY}` },
    });
    child.kill("SIGTERM");
    const { code, stdout } = await done;
    expect(code).toBe(0);
    expect(stdout).toContain('"msg":"Integrations service listening"');
    for (const secret of [
      settings.KUBECREW_OAUTH_DB_ENCRYPTION_KEY,
      settings.KUBECREW_OAUTH_COOKIE_SECRET,
      settings.KUBECREW_OAUTH_INTERNAL_API_KEY,
      settings.KUBECREW_GOOGLE_CLIENT_SECRET,
      settings.KUBECREW_MICROSOFT_CLIENT_SECRET,
    ]) {
      expect(stdout).not.toContain(secret);
    }
  });

  it("reports Redis reachability on /health", async () => {
    const service = await startIntegrations({
      ...(await env()),
      KUBECREW_REDIS_URL: privateRedis.url,
      KUBECREW_INTEGRATIONS_PORT: "0",
    });
    try {
      expect(await (await fetch(`${service.url}/health`)).json()).toEqual({
        status: "ok",
        store: "redis",
        redis: "reachable",
      });
      expect((await fetch(`${service.url}/ready`)).status).toBe(200);
      await privateRedis.stop();
      expect(await (await fetch(`${service.url}/health`)).json()).toEqual({
        status: "ok",
        store: "redis",
        redis: "unreachable",
      });
      const ready = await fetch(`${service.url}/ready`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: "not ready", store: "redis", redis: "unreachable" });
      const list = await fetch(`${service.url}/v1/internal/users/someone/connections`, {
        headers: { authorization: `Bearer ${internalApiKey}` },
      });
      expect(list.status).toBe(503);
      expect(await list.json()).toEqual({
        error: "Service Unavailable",
        message: "The connection store (Redis) is unreachable; try again shortly",
      });
      await privateRedis.start();
      let redis = "";
      for (let i = 0; i < 50 && redis !== "reachable"; i++) {
        redis = ((await (await fetch(`${service.url}/health`)).json()) as { redis: string }).redis;
        if (redis !== "reachable") await new Promise((r) => setTimeout(r, 100));
      }
      expect(redis).toBe("reachable");
    } finally {
      await service.stop();
    }
  });
});
