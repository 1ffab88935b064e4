import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { IntegrationsService } from "../../../integrations/server.ts";
import type { OidcTestProvider } from "../../support/oidc-provider.ts";
import {
  createConnectLink,
  dumpRedis,
  internal,
  type ProviderAndService,
  startProviderAndService,
  tenantId,
  TestBrowser,
  uniquePrefix,
} from "./harness.ts";

describe("Microsoft tenant restriction", () => {
  const redisUrl = inject("redisUrl");
  const prefix = uniquePrefix("tenant");
  let provider: OidcTestProvider;
  let service: IntegrationsService;

  let started: ProviderAndService | undefined;

  beforeAll(async () => {
    started = await startProviderAndService({ redisUrl, prefix, extra: { KUBECREW_MICROSOFT_TENANT_ID: tenantId } });
    ({ provider, service } = started);
  });
  afterAll(() => started?.stop());

  it("connects an account of the configured tenant", async () => {
    provider.account = { sub: "grace", email: "grace@contoso.test", tid: tenantId };
    const link = await createConnectLink(service.url, {
      userId: "user-grace",
      provider: "microsoft",
      product: "outlook",
    });
    const end = await new TestBrowser().open(link.url);
    expect(new URL(end.location!).searchParams.get("status")).toBe("connected");
    const { body } = await internal(service.url, "GET", "/v1/internal/users/user-grace/connections");
    expect(body.connections).toMatchObject([
      {
        provider: "microsoft",
        product: "outlook",
        account: { subject: "grace", tenantId },
        scopes: expect.arrayContaining(["Mail.ReadWrite", "Mail.Send"]),
      },
    ]);
  });

  it("answers 403 with a clear page to an account of another tenant, and stores nothing", async () => {
    provider.account = { sub: "eve", email: "eve@fabrikam.test", tid: "00000000-1111-2222-3333-444444444444" };
    const link = await createConnectLink(service.url, { userId: "user-eve", provider: "microsoft", product: "excel" });
    const end = await new TestBrowser().open(link.url);
    expect(end.status).toBe(403);
    expect(end.body).toContain("not in the allowed directory (tenant)");
    expect((await internal(service.url, "GET", "/v1/internal/users/user-eve/connections")).body.connections).toEqual(
      [],
    );
    const dump = await dumpRedis(redisUrl, prefix);
    for (const [key, value] of dump) {
      expect(key).not.toContain("user-eve");
      expect(value).not.toContain("user-eve");
    }
  });

  it("answers 403 to an account whose ID token carries no tenant", async () => {
    provider.account = { sub: "personal", email: "someone@outlook.test" };
    const link = await createConnectLink(service.url, {
      userId: "user-personal",
      provider: "microsoft",
      product: "calendar",
    });
    const end = await new TestBrowser().open(link.url);
    expect(end.status).toBe(403);
    expect(
      (await internal(service.url, "GET", "/v1/internal/users/user-personal/connections")).body.connections,
    ).toEqual([]);
  });
});
