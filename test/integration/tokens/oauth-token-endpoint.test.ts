import express from "express";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { TokenRateLimiter } from "../../../api/oauth/token-rate-limiter.ts";
import { tokenEndpoint } from "../../../api/oauth/token-endpoint.ts";
import { silentLogger } from "../../../core/logger.ts";
import { devConfigSchema } from "../../../dev/config.ts";
import { startDev } from "../../../dev/start.ts";
import {
  basic,
  bearer,
  clientCredentialsToken,
  sleep,
  startTokensDev,
  tokenRequest,
  waitFor,
  type TokensDev,
} from "./support.ts";

let api: TokensDev;
let clientId: string;
let clientSecret: string;

beforeAll(async () => {
  api = await startTokensDev(inject("redisUrl"));
  const created = await api.store.createClient({ role: "org", crews: ["research"], name: "ci" });
  clientId = created.record.clientId;
  clientSecret = created.clientSecret;
});
afterAll(() => api?.stop());

/** Every token endpoint answer, success or error, forbids caching (RFC 6749 §5.1, §5.2). */
function expectNoStore(headers: Headers) {
  expect(headers.get("cache-control")).toBe("no-store");
  expect(headers.get("pragma")).toBe("no-cache");
}

describe("a service account with a real OAuth client (openid-client, client credentials grant)", () => {
  it("gets an access token, kicks off a crew with it and reads the run through to completed", async () => {
    const tokens = await clientCredentialsToken(`${api.url}/oauth/token`, clientId, clientSecret);
    expect(tokens.token_type).toBe("bearer"); // openid-client lower-cases it
    expect(tokens.access_token).toMatch(/^kca_[A-Za-z0-9_-]{43}$/);
    expect(tokens.expires_in).toBe(3600);

    const kickoff = await fetch(`${api.url}/kickoff`, {
      method: "POST",
      headers: { ...bearer(tokens.access_token), "content-type": "application/json" },
      body: JSON.stringify({ inputs: { topic: "tokens" } }),
    });
    expect(kickoff.status).toBe(200);
    const { kickoff_id } = (await kickoff.json()) as { kickoff_id: string };

    const done = await waitFor(async () => {
      const res = await fetch(`${api.url}/status/${kickoff_id}`, { headers: bearer(tokens.access_token) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { status: string; result?: { tasks: unknown[] } };
      return body.status === "running" ? undefined : body;
    }, 30_000);
    expect(done.status).toBe("completed");
    expect(done.result?.tasks).toHaveLength(3);
  });

  it("answers the raw 200 body with Bearer, expires_in and no-store", async () => {
    const res = await tokenRequest(api.url, { authorization: basic(clientId, clientSecret) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ access_token: expect.stringMatching(/^kca_/), token_type: "Bearer", expires_in: 3600 });
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expectNoStore(res.headers);
  });

  it("accepts client credentials form-urlencoded before the Basic split (RFC 6749 §2.3.1)", async () => {
    const encode = (s: string) => [...s].map((c) => "%" + c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
    const res = await tokenRequest(api.url, { authorization: basic(encode(clientId), encode(clientSecret)) });
    expect(res.status).toBe(200);
  });

  it("limits the access token to the client's crews and role", async () => {
    const { access_token } = await clientCredentialsToken(`${api.url}/oauth/token`, clientId, clientSecret);
    expect((await fetch(`${api.url}/crews/research/inputs`, { headers: bearer(access_token) })).status).toBe(200);
    const elsewhere = await fetch(`${api.url}/crews/another-crew/inputs`, { headers: bearer(access_token) });
    expect(elsewhere.status).toBe(401);

    const user = await api.store.createClient({ role: "user", crews: "*" });
    const userToken = await clientCredentialsToken(`${api.url}/oauth/token`, user.record.clientId, user.clientSecret);
    const kickoff = await fetch(`${api.url}/kickoff`, {
      method: "POST",
      headers: { ...bearer(userToken.access_token), "content-type": "application/json" },
      body: JSON.stringify({ inputs: { topic: "roles" } }),
    });
    const { kickoff_id } = (await kickoff.json()) as { kickoff_id: string };
    // A user-role token sees its own executions only; the org-role client's token sees every one.
    expect((await fetch(`${api.url}/status/${kickoff_id}`, { headers: bearer(userToken.access_token) })).status).toBe(
      200,
    );
    const other = await api.store.createClient({ role: "user", crews: "*" });
    const otherToken = await clientCredentialsToken(
      `${api.url}/oauth/token`,
      other.record.clientId,
      other.clientSecret,
    );
    expect((await fetch(`${api.url}/status/${kickoff_id}`, { headers: bearer(otherToken.access_token) })).status).toBe(
      404,
    );
    expect((await fetch(`${api.url}/status/${kickoff_id}`, { headers: bearer(access_token) })).status).toBe(200);
  });

  it("stops accepting a revoked client's access tokens and credentials", async () => {
    const client = await api.store.createClient({ role: "org", crews: "*" });
    const { access_token } = await clientCredentialsToken(
      `${api.url}/oauth/token`,
      client.record.clientId,
      client.clientSecret,
    );
    expect((await fetch(`${api.url}/inputs`, { headers: bearer(access_token) })).status).toBe(200);
    await api.store.revokeClient(client.record.clientId);
    expect((await fetch(`${api.url}/inputs`, { headers: bearer(access_token) })).status).toBe(401);
    const again = await tokenRequest(api.url, { authorization: basic(client.record.clientId, client.clientSecret) });
    expect(again.status).toBe(401);
    await expect(
      clientCredentialsToken(`${api.url}/oauth/token`, client.record.clientId, client.clientSecret),
    ).rejects.toMatchObject({ status: 401, code: "OAUTH_WWW_AUTHENTICATE_CHALLENGE" }); // openid-client's view of 401 + Basic challenge
  });
});

describe("token endpoint errors (RFC 6749 §5.2), each with its status, body and headers", () => {
  const invalidRequest = { error: "invalid_request", error_description: expect.any(String) };

  it("invalid_request 400 when grant_type is missing", async () => {
    for (const body of ["", "scope=x", "grant_type="]) {
      const res = await tokenRequest(api.url, { authorization: basic(clientId, clientSecret), body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "invalid_request", error_description: "grant_type is missing" });
      expectNoStore(res.headers);
    }
  });

  it("invalid_request 400 when a parameter is repeated", async () => {
    const res = await tokenRequest(api.url, {
      authorization: basic(clientId, clientSecret),
      body: "grant_type=client_credentials&grant_type=client_credentials",
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "invalid_request", error_description: "Parameter grant_type is repeated" });
    expectNoStore(res.headers);
    const scope = await tokenRequest(api.url, {
      authorization: basic(clientId, clientSecret),
      body: "grant_type=client_credentials&scope=a&scope=b",
    });
    expect(scope.status).toBe(400);
    expect(scope.body.error_description).toBe("Parameter scope is repeated");
  });

  it("invalid_request 400 for any content type but a form", async () => {
    const cases = [
      { contentType: "application/json", body: JSON.stringify({ grant_type: "client_credentials" }) },
      { contentType: "application/json", body: "{not json" },
      { contentType: "text/plain", body: "grant_type=client_credentials" },
      { contentType: "", body: "grant_type=client_credentials" },
    ];
    for (const c of cases) {
      const res = await tokenRequest(api.url, { authorization: basic(clientId, clientSecret), ...c });
      expect(res.status, c.contentType).toBe(400);
      expect(res.body).toEqual({
        error: "invalid_request",
        error_description: "Send the parameters as application/x-www-form-urlencoded",
      });
      expectNoStore(res.headers);
    }
    const charset = await tokenRequest(api.url, {
      authorization: basic(clientId, clientSecret),
      contentType: "application/x-www-form-urlencoded; charset=UTF-8",
    });
    expect(charset.status).toBe(200);
  });

  it("invalid_request 400 for a body above 16 KiB", async () => {
    const res = await tokenRequest(api.url, {
      authorization: basic(clientId, clientSecret),
      body: "grant_type=client_credentials&scope=" + "a".repeat(20_000),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "invalid_request", error_description: "The request body is too large" });
    expectNoStore(res.headers);
  });

  it("unsupported_grant_type 400 for any other grant", async () => {
    for (const grant of [
      "password",
      "authorization_code",
      "refresh_token",
      "urn:ietf:params:oauth:grant-type:jwt-bearer",
    ]) {
      const res = await tokenRequest(api.url, {
        authorization: basic(clientId, clientSecret),
        body: `grant_type=${encodeURIComponent(grant)}`,
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: "unsupported_grant_type",
        error_description: `grant_type "${grant}" is not supported; use client_credentials`,
      });
      expectNoStore(res.headers);
    }
  });

  it("invalid_client 401 with WWW-Authenticate: Basic for missing, malformed, unknown or wrong credentials", async () => {
    const cases = [
      { name: "no Authorization", authorization: undefined, description: "Client authentication is missing" },
      { name: "a bearer token", authorization: "Bearer abc", description: "Malformed Basic credentials" },
      {
        name: "no colon",
        authorization: "Basic " + Buffer.from(clientId).toString("base64"),
        description: "Malformed Basic credentials",
      },
      {
        name: "bad percent-encoding",
        authorization: basic("%zz", clientSecret),
        description: "Malformed Basic credentials",
      },
      { name: "empty client_id", authorization: basic("", clientSecret), description: "Malformed Basic credentials" },
      {
        name: "wrong secret",
        authorization: basic(clientId, clientSecret.slice(0, -2)),
        description: "Client authentication failed",
      },
      { name: "empty secret", authorization: basic(clientId, ""), description: "Client authentication failed" },
      {
        name: "unknown client",
        authorization: basic("client_0000000000000000", clientSecret),
        description: "Client authentication failed",
      },
      {
        name: "secret of another client",
        authorization: basic(clientId, "kcs_" + "A".repeat(43)),
        description: "Client authentication failed",
      },
    ];
    for (const c of cases) {
      const res = await tokenRequest(api.url, c.authorization ? { authorization: c.authorization } : {});
      expect(res.status, c.name).toBe(401);
      expect(res.body, c.name).toEqual({ error: "invalid_client", error_description: c.description });
      expect(res.headers.get("www-authenticate"), c.name).toBe('Basic realm="kubecrew"');
      expectNoStore(res.headers);
    }
  });

  it("takes HTTP Basic only: a secret in the body alone is invalid_client, with Basic as well invalid_request", async () => {
    const post = await tokenRequest(api.url, {
      body: `grant_type=client_credentials&client_id=${clientId}&client_secret=${clientSecret}`,
    });
    expect(post.status).toBe(401);
    expect(post.body).toEqual({
      error: "invalid_client",
      error_description: "Authenticate the client with HTTP Basic",
    });
    expect(post.headers.get("www-authenticate")).toBe('Basic realm="kubecrew"');
    expectNoStore(post.headers);

    const both = await tokenRequest(api.url, {
      authorization: basic(clientId, clientSecret),
      body: `grant_type=client_credentials&client_secret=${clientSecret}`,
    });
    expect(both.status).toBe(400);
    expect(both.body).toEqual({
      ...invalidRequest,
      error_description: expect.stringMatching(/one client authentication method/),
    });
    expectNoStore(both.headers);

    const sameId = await tokenRequest(api.url, {
      authorization: basic(clientId, clientSecret),
      body: `grant_type=client_credentials&client_id=${clientId}`,
    });
    expect(sameId.status).toBe(200);
    const otherId = await tokenRequest(api.url, {
      authorization: basic(clientId, clientSecret),
      body: "grant_type=client_credentials&client_id=someone-else",
    });
    expect(otherId.status).toBe(400);
    expect(otherId.body.error).toBe("invalid_request");
  });

  it("answers other methods with 405 and Allow: POST", async () => {
    const res = await tokenRequest(api.url, { method: "GET" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(res.body).toEqual({ error: "invalid_request", error_description: "Use POST" });
    expectNoStore(res.headers);
  });

  it("documents the endpoint in the OpenAPI document; the admin API is absent without an admin key", async () => {
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths["/oauth/token"]!)).toEqual(["post"]);
    expect(doc.paths["/admin/tokens"]).toBeUndefined();
    const admin = await fetch(`${api.url}/admin/tokens`, { headers: { "x-admin-key": "x".repeat(40) } });
    expect(admin.status).toBe(404);
  });
});

describe("access token lifetime", () => {
  it("is expires_in as configured, and the crew API answers 401 once it has passed", async () => {
    const shortLived = await startTokensDev(inject("redisUrl"), { KUBECREW_TOKEN_TTL_SECONDS: "2" });
    try {
      const client = await shortLived.store.createClient({ role: "org", crews: "*" });
      const tokens = await clientCredentialsToken(
        `${shortLived.url}/oauth/token`,
        client.record.clientId,
        client.clientSecret,
      );
      expect(tokens.expires_in).toBe(2);
      expect((await fetch(`${shortLived.url}/inputs`, { headers: bearer(tokens.access_token) })).status).toBe(200);
      await sleep(2200);
      const expired = await fetch(`${shortLived.url}/inputs`, { headers: bearer(tokens.access_token) });
      expect(expired.status).toBe(401);
      expect(await expired.json()).toEqual({ error: "Unauthorized", message: "Invalid or missing bearer token" });
    } finally {
      await shortLived.stop();
    }
  });
});

describe("the token endpoint mounted at its own auth_url", () => {
  it("serves {auth_url}/oauth/token from another server, issuing tokens the crew API accepts", async () => {
    const auth = express();
    auth.set("trust proxy", 1);
    const limiter = TokenRateLimiter.redis(
      api.redis,
      { perClient: 100, perIp: 100, windowSeconds: 60, failedAuthCost: 5 },
      "test-auth-url:",
    );
    auth.use(
      "/auth",
      tokenEndpoint({ store: api.store, limiter, accessTokenTtlSeconds: 600, realm: "auth", log: silentLogger() }),
    );
    const server = auth.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const authUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth`;
    try {
      const tokens = await clientCredentialsToken(`${authUrl}/oauth/token`, clientId, clientSecret);
      expect(tokens.expires_in).toBe(600);
      expect((await fetch(`${api.url}/inputs`, { headers: bearer(tokens.access_token) })).status).toBe(200);
      const wrong = await tokenRequest(authUrl, { authorization: basic(clientId, "nope") });
      expect(wrong.headers.get("www-authenticate")).toBe('Basic realm="auth"');
    } finally {
      server.close();
    }
  });
});

describe("kubecrew dev without KUBECREW_REDIS_URL", () => {
  it("keeps tokens and clients in memory, with the same token endpoint and admin API", async () => {
    const adminKey = "memory-admin-key-0123456789abcdef0123";
    const config = devConfigSchema.parse({
      PORT: "0",
      KUBECREW_DEFAULT_CREW: "research",
      KUBECREW_ADMIN_KEY: adminKey,
    });
    const dev = await startDev(config, silentLogger());
    try {
      expect((await fetch(`${dev.url}/inputs`, { headers: bearer(dev.orgToken!) })).status).toBe(200);
      const created = (await (
        await fetch(`${dev.url}/admin/clients`, {
          method: "POST",
          headers: { "x-admin-key": adminKey, "content-type": "application/json" },
          body: JSON.stringify({ crews: ["research"] }),
        })
      ).json()) as { client_id: string; client_secret: string };
      const tokens = await clientCredentialsToken(`${dev.url}/oauth/token`, created.client_id, created.client_secret);
      expect((await fetch(`${dev.url}/inputs`, { headers: bearer(tokens.access_token) })).status).toBe(200);
      const wrong = await tokenRequest(dev.url, { authorization: basic(created.client_id, "nope") });
      expect(wrong.status).toBe(401);
      expect(wrong.body.error).toBe("invalid_client");
    } finally {
      await dev.stop();
    }
  });
});
