import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import type { IntegrationsService } from "../../../integrations/server.ts";
import type { OidcTestProvider } from "../../support/oidc-provider.ts";
import { freePort } from "../../support/ports.ts";
import {
  createConnectLink,
  dumpRedis,
  internal,
  type ProviderAndService,
  startIntegrations,
  startProviderAndService,
  TestBrowser,
  uniquePrefix,
} from "./harness.ts";

describe("access tokens from the internal API", () => {
  const redisUrl = inject("redisUrl");
  const prefix = uniquePrefix("tokens");
  let provider: OidcTestProvider;
  let replicaA: IntegrationsService;
  let replicaB: IntegrationsService;
  let users = 0;

  let started: ProviderAndService | undefined;

  beforeAll(async () => {
    started = await startProviderAndService({ redisUrl, prefix });
    ({ provider, service: replicaA } = started);
    // Two replicas sharing one Redis, as in a Deployment with replicas: 2.
    replicaB = await startIntegrations({ ...started.env, KUBECREW_INTEGRATIONS_PORT: String(await freePort()) });
  });
  afterAll(async () => {
    await replicaB?.stop();
    await started?.stop();
  });
  beforeEach(() => {
    provider.accessTokenTtlSeconds = 3600;
    provider.rotateRefreshTokens = false;
    provider.omitRefreshTokenOnRefresh = false;
  });

  /** Signs a new user in with access tokens living `ttl` seconds; the service refreshes 60 s ahead of expiry. */
  async function connect(ttl: number, product = "gmail"): Promise<string> {
    users += 1;
    provider.account = { sub: `token-user-${users}`, email: `u${users}@example.com` };
    provider.accessTokenTtlSeconds = ttl;
    const link = await createConnectLink(replicaA.url, { userId: `token-user-${users}`, provider: "google", product });
    const end = await new TestBrowser().open(link.url);
    return new URL(end.location!).searchParams.get("connection_id")!;
  }

  const token = (service: IntegrationsService, id: string) =>
    internal(service.url, "POST", `/v1/internal/connections/${id}/access-token`);

  it("hands out the stored token while it is far from expiry, without a refresh", async () => {
    const id = await connect(3600);
    const before = provider.refreshCount();
    const first = await token(replicaA, id);
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(first.body).toMatchObject({
      token_type: expect.stringMatching(/^bearer$/i),
      scope: expect.stringContaining("gmail"),
    });
    expect(first.body.expires_in).toBeGreaterThan(3500);
    expect(await provider.isAccessTokenActive(first.body.access_token)).toBe(true);
    expect((await token(replicaB, id)).body.access_token).toBe(first.body.access_token);
    expect(provider.refreshCount()).toBe(before);
  });

  it("refreshes a token that expires within the refresh-ahead window", async () => {
    const id = await connect(30);
    const signInToken = provider.issuedTokens().at(-3);
    provider.accessTokenTtlSeconds = 3600;
    const before = provider.refreshCount();
    const fresh = await token(replicaA, id);
    expect(fresh.status).toBe(200);
    expect(provider.refreshCount()).toBe(before + 1);
    expect(fresh.body.access_token).not.toBe(signInToken);
    expect(fresh.body.expires_in).toBeGreaterThan(3500);
    expect(await provider.isAccessTokenActive(fresh.body.access_token)).toBe(true);
    // Now fresh: the next caller gets the same token without another refresh.
    expect((await token(replicaB, id)).body.access_token).toBe(fresh.body.access_token);
    expect(provider.refreshCount()).toBe(before + 1);
  });

  it("makes exactly one refresh at the provider for 20 concurrent requests on two replicas", async () => {
    const id = await connect(30);
    provider.accessTokenTtlSeconds = 3600;
    const before = provider.refreshCount();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => token(i % 2 === 0 ? replicaA : replicaB, id)),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.body.access_token)).size).toBe(1);
    expect(provider.refreshCount() - before).toBe(1);
  });

  it("replaces a rotated refresh token, so later refreshes keep working", async () => {
    provider.rotateRefreshTokens = true;
    const id = await connect(30);
    const before = provider.refreshCount();
    const first = await token(replicaA, id);
    const second = await token(replicaA, id);
    const third = await token(replicaB, id);
    for (const answer of [first, second, third]) expect(answer.status).toBe(200);
    expect(new Set([first, second, third].map((a) => a.body.access_token)).size).toBe(3);
    // The provider refuses a consumed refresh token (and revokes the grant): three successes mean each rotation was kept.
    expect(provider.refreshCount() - before).toBe(3);
    expect(await provider.isAccessTokenActive(third.body.access_token)).toBe(true);
  });

  it("keeps the stored refresh token when a refresh response carries none", async () => {
    provider.omitRefreshTokenOnRefresh = true;
    const id = await connect(30);
    const before = provider.refreshCount();
    expect((await token(replicaA, id)).status).toBe(200);
    expect((await token(replicaA, id)).status).toBe(200);
    expect(provider.refreshCount() - before).toBe(2);
    expect((await internal(replicaA.url, "GET", `/v1/internal/connections/${id}`)).body.hasRefreshToken).toBe(true);
  });

  it("never stores a token in clear, after refreshes as well", async () => {
    const tokens = provider.issuedTokens();
    expect(tokens.length).toBeGreaterThan(10);
    for (const [key, value] of await dumpRedis(redisUrl, prefix)) {
      for (const issued of tokens) {
        expect(key.includes(issued)).toBe(false);
        expect(value.includes(issued)).toBe(false);
      }
    }
  });

  it("reports tampered ciphertext instead of returning it", async () => {
    const id = await connect(3600);
    const redis = new Redis(redisUrl);
    try {
      const key = `${prefix}connection:${id}`;
      const record = JSON.parse((await redis.get(key))!);
      const parts = record.sealedAccessToken.split(".");
      const bytes = Buffer.from(parts[3], "base64url");
      bytes[0] = bytes[0]! ^ 0xff;
      parts[3] = bytes.toString("base64url");
      await redis.set(key, JSON.stringify({ ...record, sealedAccessToken: parts.join(".") }));
    } finally {
      redis.disconnect();
    }
    const answer = await token(replicaA, id);
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({
      error: "Stored token unreadable",
      message: "The stored tokens of this connection failed their integrity check and were not used; connect it again",
    });
  });

  it("answers 404 for an unknown connection", async () => {
    const answer = await token(replicaA, "no-such-connection");
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      error: "Connection not found",
      message: "No connection found with ID: no-such-connection",
    });
  });

  it("deletes a connection and revokes its grant at the provider (RFC 7009)", async () => {
    const id = await connect(3600);
    const userId = `token-user-${users}`;
    const { body } = await token(replicaA, id);
    expect(await provider.isAccessTokenActive(body.access_token)).toBe(true);
    const deleted = await internal(replicaA.url, "DELETE", `/v1/internal/connections/${id}`);
    expect(deleted).toMatchObject({ status: 200, body: { deleted: true, revoked: true } });
    expect(await provider.isAccessTokenActive(body.access_token)).toBe(false);
    expect((await internal(replicaA.url, "GET", `/v1/internal/users/${userId}/connections`)).body.connections).toEqual(
      [],
    );
    expect((await token(replicaA, id)).status).toBe(404);
    expect((await internal(replicaA.url, "DELETE", `/v1/internal/connections/${id}`)).status).toBe(404);
  });

  it("asks for a new sign-in when the provider no longer honours the refresh token", async () => {
    const id = await connect(30);
    const first = await token(replicaA, id);
    expect(first.status).toBe(200);
    expect((await internal(replicaA.url, "GET", `/v1/internal/connections/${id}`)).body.status).toBe("active");
    // Revoke the grant behind the service's back, as a user does from the provider's account page.
    await fetch(`${provider.issuer}/token/revocation`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: first.body.access_token,
        client_id: "google-client",
        client_secret: "google-secret-value-123",
      }),
    });
    const answer = await token(replicaA, id);
    expect(answer.status).toBe(409);
    expect(answer.body.error).toBe("Reauthorization required");
    expect((await internal(replicaA.url, "GET", `/v1/internal/connections/${id}`)).body.status).toBe(
      "reauthorization_required",
    );
  });
});
