import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { IntegrationsService } from "../../../integrations/server.ts";
import type { OidcTestProvider } from "../../support/oidc-provider.ts";
import {
  createConnectLink,
  dumpRedis,
  integrationsEnv,
  internal,
  planBases,
  returnUrl,
  startIntegrations,
  startProvider,
  TestBrowser,
  uniquePrefix,
} from "./harness.ts";

describe("sign-in through the integrations service", () => {
  const redisUrl = inject("redisUrl");
  const prefix = uniquePrefix("sign-in");
  let provider: OidcTestProvider;
  let service: IntegrationsService;

  beforeAll(async () => {
    const bases = await planBases();
    provider = await startProvider([bases.direct]);
    service = await startIntegrations(
      integrationsEnv({ issuer: provider.issuer, publicUrl: bases.direct, redisUrl, port: bases.directPort, prefix, extra: { GOOGLE_HOSTED_DOMAIN: "example.com" } }),
    );
  });
  afterAll(async () => {
    await service?.stop();
    await provider?.stop();
  });

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
});
