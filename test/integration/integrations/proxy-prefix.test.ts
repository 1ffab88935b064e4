import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { IntegrationsService } from "../../../integrations/server.ts";
import type { OidcTestProvider } from "../../support/oidc-provider.ts";
import { startPrefixProxy, type PrefixProxy } from "../../support/nginx.ts";
import {
  createConnectLink,
  integrationsEnv,
  internal,
  planBases,
  returnUrl,
  startIntegrations,
  startProvider,
  TestBrowser,
  uniquePrefix,
} from "./harness.ts";

describe("behind nginx stripping /oauthsvc, as the Ingress does", () => {
  const redisUrl = inject("redisUrl");
  const prefix = uniquePrefix("proxy");
  let provider: OidcTestProvider;
  let direct: IntegrationsService;
  let behindProxy: IntegrationsService;
  let proxy: PrefixProxy;

  beforeAll(async () => {
    const bases = await planBases({ proxied: true });
    provider = await startProvider([bases.direct, bases.proxied!]);
    // One deployment at a dedicated host with prefix `/`, one sharing the web application's host under /oauthsvc.
    direct = await startIntegrations(
      integrationsEnv({ issuer: provider.issuer, publicUrl: bases.direct, redisUrl, port: bases.directPort, prefix }),
    );
    behindProxy = await startIntegrations(
      integrationsEnv({ issuer: provider.issuer, publicUrl: bases.proxied!, redisUrl, port: 0, prefix }),
    );
    proxy = await startPrefixProxy({ upstream: behindProxy.url, port: bases.proxyPort! });
  });
  afterAll(async () => {
    await proxy?.stop();
    await behindProxy?.stop();
    await direct?.stop();
    await provider?.stop();
  });

  it("serves /health at / and at /oauthsvc/health", async () => {
    for (const url of [`${direct.url}/health`, `${proxy.url}/health`]) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: "ok", store: "redis", redis: "reachable" });
    }
    expect((await fetch(`${proxy.url}`)).status).toBe(404);
  });

  it("completes the whole sign-in at /", async () => {
    provider.account = { sub: "root-user", email: "root@example.com" };
    const link = await createConnectLink(direct.url, { userId: "user-root", provider: "google", product: "docs" });
    expect(link.url).toBe(`${direct.url}/v1/connect/${link.id}`);
    const browser = new TestBrowser();
    const end = await browser.open(link.url);
    expect(new URL(end.location!).searchParams.get("status")).toBe("connected");
    expect(browser.visited.some((url) => url.startsWith(`${direct.url}/v1/auth/google/callback?`))).toBe(true);
  });

  it("completes the whole sign-in through /oauthsvc, with redirect URI and cookie path under the prefix", async () => {
    provider.account = { sub: "prefixed-user", email: "prefixed@example.com" };
    // The rest of the system calls the internal API through the proxy too.
    const link = await createConnectLink(proxy.url, {
      userId: "user-prefixed",
      provider: "microsoft",
      product: "onedrive",
    });
    expect(link.url).toBe(`${proxy.url}/v1/connect/${link.id}`);
    const browser = new TestBrowser();
    const end = await browser.open(link.url);
    expect(end.status).toBe(303);
    const back = new URL(end.location!);
    expect(back.origin + back.pathname).toBe(returnUrl);
    expect(back.searchParams.get("status")).toBe("connected");
    const authorize = new URL(browser.visited.find((url) => url.startsWith(provider.issuer))!);
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${proxy.url}/v1/auth/microsoft/callback`);
    expect(browser.visited.some((url) => url.startsWith(`${proxy.url}/v1/auth/microsoft/callback?`))).toBe(true);
    expect(
      browser.setCookies.find((c) => c.startsWith("kubecrew_oauth_signin=") && !c.includes("Max-Age=0")),
    ).toContain("Path=/oauthsvc/v1/auth;");
    const { body } = await internal(proxy.url, "GET", "/v1/internal/users/user-prefixed/connections");
    expect(body.connections).toMatchObject([{ provider: "microsoft", product: "onedrive", status: "active" }]);
    const token = await internal(proxy.url, "POST", `/v1/internal/connections/${body.connections[0].id}/access-token`);
    expect(token.status).toBe(200);
    expect(await provider.isAccessTokenActive(token.body.access_token)).toBe(true);
  });

  it("rejects a replayed callback through the proxy too", async () => {
    provider.account = { sub: "replay-user", email: "replay@example.com" };
    const link = await createConnectLink(proxy.url, {
      userId: "user-proxy-replay",
      provider: "google",
      product: "gmail",
    });
    const browser = new TestBrowser();
    const stop = await browser.open(link.url, { stopAtPath: /\/oauthsvc\/v1\/auth\/google\/callback$/ });
    const cookie = await browser.cookieHeader(stop.location!);
    const first = await fetch(stop.location!, { redirect: "manual", headers: { cookie } });
    expect(first.status).toBe(303);
    const replay = await fetch(stop.location!, { redirect: "manual", headers: { cookie } });
    expect(replay.status).toBe(400);
  });
});
