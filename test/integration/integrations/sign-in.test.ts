import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { IntegrationsService } from "../../../integrations/server.ts";
import type { OidcTestProvider } from "../../support/oidc-provider.ts";
import {
  capturingLogger,
  createConnectLink,
  dumpRedis,
  internal,
  internalApiKey,
  type ProviderAndService,
  returnUrl,
  startProviderAndService,
  TestBrowser,
  uniquePrefix,
} from "./harness.ts";

describe("sign-in through the integrations service", () => {
  const redisUrl = inject("redisUrl");
  const prefix = uniquePrefix("sign-in");
  let provider: OidcTestProvider;
  let service: IntegrationsService;
  let env: Record<string, string>;
  const logs = capturingLogger();

  let started: ProviderAndService | undefined;

  beforeAll(async () => {
    started = await startProviderAndService({
      redisUrl,
      prefix,
      extra: { KUBECREW_GOOGLE_HOSTED_DOMAIN: "example.com" },
      logger: logs.logger,
    });
    ({ provider, service, env } = started);
  });
  afterAll(() => started?.stop());

  it("stores a connection, and no stored Redis value contains any token", async () => {
    provider.account = { sub: "ada", email: "ada@example.com", hd: "example.com" };
    const link = await createConnectLink(service.url, { userId: "user-ada", provider: "google", product: "gmail" });
    const browser = new TestBrowser();
    const end = await browser.open(link.url);
    expect(end.status).toBe(303);
    const back = new URL(end.location!);
    expect(back.origin + back.pathname).toBe(returnUrl);
    expect(back.searchParams.get("status")).toBe("connected");
    const connectionId = back.searchParams.get("connection_id");

    const { body } = await internal(service.url, "GET", "/v1/internal/users/user-ada/connections");
    expect(body.connections).toHaveLength(1);
    expect(body.connections[0]).toMatchObject({
      id: connectionId,
      provider: "google",
      product: "gmail",
      status: "active",
      hasRefreshToken: true,
      account: { subject: "ada", email: "ada@example.com", hostedDomain: "example.com" },
    });

    const tokens = provider.issuedTokens();
    expect(tokens.length).toBeGreaterThanOrEqual(3);
    const dump = await dumpRedis(redisUrl, prefix);
    expect(dump.size).toBeGreaterThan(0);
    for (const [key, value] of dump) {
      for (const token of tokens) {
        expect(key.includes(token), `token in key ${key}`).toBe(false);
        expect(value.includes(token), `token in value of ${key}`).toBe(false);
      }
    }
  });

  it("sets a signed, httpOnly, SameSite=Lax sign-in cookie and sends PKCE S256, state and the hd hint", async () => {
    const link = await createConnectLink(service.url, { userId: "user-cookie", provider: "google", product: "drive" });
    const start = await fetch(link.url, { redirect: "manual" });
    expect(start.status).toBe(303);
    const cookie = start.headers.getSetCookie()[0]!;
    expect(cookie).toMatch(
      /^kubecrew_oauth_signin=[^;]+\.[^;]+; Path=\/v1\/auth; Max-Age=\d+; HttpOnly; SameSite=Lax$/,
    );
    const authorization = new URL(start.headers.get("location")!);
    expect(authorization.origin).toBe(provider.issuer);
    expect(authorization.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorization.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorization.searchParams.get("state")).toBeTruthy();
    expect(authorization.searchParams.get("hd")).toBe("example.com");
    expect(authorization.searchParams.get("access_type")).toBe("offline");
    expect(authorization.searchParams.get("prompt")).toBe("consent");
    expect(authorization.searchParams.get("redirect_uri")).toBe(
      `${new URL(service.url).origin}/v1/auth/google/callback`,
    );
    expect(authorization.searchParams.get("scope")).toBe("openid email profile https://www.googleapis.com/auth/drive");
    // The connect link is single use.
    const again = await fetch(link.url, { redirect: "manual" });
    expect(again.status).toBe(400);
    expect(again.headers.get("content-type")).toMatch(/text\/html/);
    expect(await again.text()).toContain("expired or was already used");
  });

  describe("state checks", () => {
    async function reachCallback(userId: string) {
      provider.account = { sub: userId, email: `${userId}@example.com`, hd: "example.com" };
      const link = await createConnectLink(service.url, { userId, provider: "google", product: "calendar" });
      const browser = new TestBrowser();
      const stop = await browser.open(link.url, { stopAtPath: /\/v1\/auth\/google\/callback$/ });
      const callback = new URL(stop.location!);
      return { callback, cookie: await browser.cookieHeader(callback.href) };
    }

    async function get(url: URL | string, cookie?: string) {
      const response = await fetch(url, { redirect: "manual", headers: cookie ? { cookie } : {} });
      return {
        status: response.status,
        body: await response.text(),
        location: response.headers.get("location"),
        type: response.headers.get("content-type"),
      };
    }

    it("answers 400 to a wrong state and stores nothing", async () => {
      const { callback, cookie } = await reachCallback("user-wrong-state");
      expect(cookie).toContain("kubecrew_oauth_signin=");
      const wrong = new URL(callback);
      wrong.searchParams.set("state", "not-the-state");
      const answer = await get(wrong, cookie);
      expect(answer.status).toBe(400);
      expect(answer.type).toMatch(/text\/html/);
      expect(answer.body).toContain("does not match");
      expect(
        (await internal(service.url, "GET", "/v1/internal/users/user-wrong-state/connections")).body.connections,
      ).toEqual([]);
    });

    it("answers 400 to a missing state, and to a missing cookie", async () => {
      const { callback, cookie } = await reachCallback("user-missing-state");
      const noState = new URL(callback);
      noState.searchParams.delete("state");
      const missing = await get(noState, cookie);
      expect(missing.status).toBe(400);
      expect(missing.body).toContain("carries no state");
      const noCookie = await get(callback);
      expect(noCookie.status).toBe(400);
      expect(noCookie.body).toContain("sign-in cookie is missing");
    });

    it("answers 400 to a replayed callback", async () => {
      const { callback, cookie } = await reachCallback("user-replay");
      const first = await get(callback, cookie);
      expect(first.status).toBe(303);
      expect(new URL(first.location!).searchParams.get("status")).toBe("connected");
      const replay = await get(callback, cookie);
      expect(replay.status).toBe(400);
      expect(replay.body).toContain("already used or has expired");
    });

    it("refuses a forged cookie", async () => {
      const { callback, cookie } = await reachCallback("user-forged");
      const [name, value] = cookie.split("=", 2) as [string, string];
      const forged = `${name}=${Buffer.from(JSON.stringify({ state: callback.searchParams.get("state"), codeVerifier: "x".repeat(43), expiresAt: Date.now() + 60_000 })).toString("base64url")}.${value.split(".")[1]}`;
      const answer = await get(callback, forged);
      expect(answer.status).toBe(400);
      expect(answer.body).toContain("sign-in cookie is missing");
    });
  });

  it("answers 403 with a clear page to an account of another Google domain, and stores nothing", async () => {
    provider.account = { sub: "mallory", email: "mallory@other.org", hd: "other.org" };
    const link = await createConnectLink(service.url, {
      userId: "user-other-domain",
      provider: "google",
      product: "sheets",
    });
    const end = await new TestBrowser().open(link.url);
    expect(end.status).toBe(403);
    expect(end.body).toContain("This account cannot be connected");
    expect(end.body).toContain("belongs to other.org; only accounts of example.com may be connected");
    expect(
      (await internal(service.url, "GET", "/v1/internal/users/user-other-domain/connections")).body.connections,
    ).toEqual([]);
    const dump = await dumpRedis(redisUrl, prefix);
    expect([...dump.keys()].filter((key) => key.includes("user-other-domain"))).toEqual([]);
    for (const value of dump.values()) expect(value).not.toContain("user-other-domain");
  });

  it("refuses a Google account without any hosted domain when one is required", async () => {
    provider.account = { sub: "gmail-user", email: "someone@gmail.test" };
    const link = await createConnectLink(service.url, {
      userId: "user-no-domain",
      provider: "google",
      product: "gmail",
    });
    const end = await new TestBrowser().open(link.url);
    expect(end.status).toBe(403);
    expect(
      (await internal(service.url, "GET", "/v1/internal/users/user-no-domain/connections")).body.connections,
    ).toEqual([]);
  });

  it("sends the browser back with the provider's error when the user declines, storing nothing", async () => {
    provider.account = { sub: "decliner", email: "decliner@example.com", hd: "example.com" };
    provider.declineConsent = true;
    try {
      const link = await createConnectLink(service.url, {
        userId: "user-declines",
        provider: "google",
        product: "gmail",
      });
      const end = await new TestBrowser().open(link.url);
      expect(end.status).toBe(303);
      expect(Object.fromEntries(new URL(end.location!).searchParams)).toEqual({
        status: "error",
        error: "access_denied",
        provider: "google",
        product: "gmail",
      });
      expect(
        (await internal(service.url, "GET", "/v1/internal/users/user-declines/connections")).body.connections,
      ).toEqual([]);
    } finally {
      provider.declineConsent = false;
    }
  });

  it("connects an OAuth 2 provider without ID tokens (HubSpot's entry, endpoints pointed at the test provider)", async () => {
    const link = await createConnectLink(service.url, { userId: "user-crm", provider: "hubspot", product: "crm" });
    const end = await new TestBrowser().open(link.url);
    expect(end.location, end.body).toBeDefined();
    expect(Object.fromEntries(new URL(end.location!).searchParams)).toMatchObject({ status: "connected" });
    const { body } = await internal(service.url, "GET", "/v1/internal/users/user-crm/connections");
    expect(body.connections).toMatchObject([
      { provider: "hubspot", product: "crm", account: {}, hasRefreshToken: true },
    ]);
  });

  it("answers 404 with a clear body for a provider without credentials, and for an unknown provider", async () => {
    const notion = await internal(service.url, "POST", "/v1/internal/connect-sessions", {
      userId: "u",
      provider: "notion",
      product: "notes",
      returnUrl,
    });
    expect(notion.status).toBe(404);
    expect(notion.body).toEqual({
      error: "Provider not configured",
      message: expect.stringContaining(
        "No client credentials are configured for notion notes; set KUBECREW_NOTION_CLIENT_ID and KUBECREW_NOTION_CLIENT_SECRET",
      ),
    });
    const unknown = await internal(service.url, "POST", "/v1/internal/connect-sessions", {
      userId: "u",
      provider: "myspace",
      product: "x",
      returnUrl,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe("Provider not configured");
    const callback = await fetch(`${service.url}/v1/auth/notion/callback?state=abc&code=def`);
    expect(callback.status).toBe(404);
    expect(await callback.text()).toContain("Unknown or unconfigured provider: notion");
    const providers = await internal(service.url, "GET", "/v1/internal/providers");
    expect(providers.body.providers.map((p: { id: string }) => p.id)).toEqual(["google", "microsoft", "hubspot"]);
  });

  it("refuses a return URL outside the allow list (no open redirect)", async () => {
    for (const bad of ["https://evil.example.net/steal", "//evil.example.net/", "javascript:alert(1)"]) {
      const answer = await internal(service.url, "POST", "/v1/internal/connect-sessions", {
        userId: "u",
        provider: "google",
        product: "gmail",
        returnUrl: bad,
      });
      expect(answer.status).toBe(400);
      expect(answer.body.message).toContain("returnUrl must be an absolute http(s) URL on an allowed host");
    }
  });

  it("requires the internal API key", async () => {
    for (const authorization of [undefined, "Bearer wrong-key", `Basic ${Buffer.from("a:b").toString("base64")}`]) {
      const response = await fetch(`${service.url}/v1/internal/users/user-ada/connections`, {
        headers: authorization ? { authorization } : {},
      });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ error: "Unauthorized", message: "Invalid or missing internal API key" });
    }
  });

  it("answers bad bodies with a clear 400 and bodies over 10 MB with 413", async () => {
    const invalid = await internal(service.url, "POST", "/v1/internal/connect-sessions", { provider: "google" });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toBe("Bad Request");
    const big = await fetch(`${service.url}/v1/internal/connect-sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${internalApiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        userId: "u",
        provider: "google",
        product: "gmail",
        returnUrl,
        padding: "x".repeat(11 * 1024 * 1024),
      }),
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({ error: "Payload Too Large", message: "Request bodies are limited to 10 MB" });
    const underLimit = await fetch(`${service.url}/v1/internal/connect-sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${internalApiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        userId: "u",
        provider: "google",
        product: "gmail",
        returnUrl,
        padding: "x".repeat(9 * 1024 * 1024),
      }),
    });
    expect(underLimit.status).toBe(201);
  });

  it("logs what happened without any token, code, state or secret", async () => {
    const lines = logs.lines();
    expect(lines).toContain('"msg":"Connection stored"');
    expect(lines).toContain('"msg":"Sign-in refused: account outside the allowed organisation"');
    const secrets = [
      ...provider.issuedTokens(),
      env["KUBECREW_OAUTH_COOKIE_SECRET"]!,
      env["KUBECREW_OAUTH_INTERNAL_API_KEY"]!,
      env["KUBECREW_OAUTH_DB_ENCRYPTION_KEY"]!,
      env["KUBECREW_GOOGLE_CLIENT_SECRET"]!,
      env["KUBECREW_HUBSPOT_CLIENT_SECRET"]!,
    ];
    for (const secret of secrets) expect(lines.includes(secret), "a secret in the logs").toBe(false);
    expect(lines).not.toMatch(/[?&](code|state)=/);
    // Routes are logged as patterns: one-time connect links never reach a log line.
    expect(lines).toContain('"route":"/v1/connect/:sessionId"');
    expect(lines).not.toMatch(/\/v1\/connect\/[^:]/);
  });
});
