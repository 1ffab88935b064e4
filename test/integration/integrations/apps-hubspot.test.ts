import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startHubspotFixture, type HubspotFixture } from "../../support/provider-fixtures/hubspot.ts";
import { appsClient, appsSigningKey, connectApp, credential } from "./apps-harness.ts";
import { capturingLogger, startProviderAndService, uniquePrefix, type ProviderAndService } from "./harness.ts";

describe("HubSpot served as MCP at /v1/mcp", () => {
  const redisUrl = inject("redisUrl");
  let crm: HubspotFixture;
  let started: ProviderAndService;
  let service: string;
  const logs = capturingLogger();

  beforeAll(async () => {
    crm = await startHubspotFixture();
    started = await startProviderAndService({
      redisUrl,
      prefix: uniquePrefix("apps-hubspot"),
      extra: { KUBECREW_APPS_SIGNING_KEY: appsSigningKey, KUBECREW_HUBSPOT_API_BASE_URL: crm.url },
      logger: logs.logger,
    });
    service = started.service.url;
  });
  afterAll(async () => {
    await started?.stop();
    await crm?.stop();
  });

  it("creates and finds alice's contacts and deals with exactly the access token HubSpot issued her", async () => {
    const { accessToken } = await connectApp(service, started.provider, "alice", "hubspot", "crm");
    const client = await appsClient(service, await credential("alice", ["hubspot"]));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "hubspot__search_contacts",
      "hubspot__create_contact",
      "hubspot__search_deals",
      "hubspot__create_deal",
    ]);
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError ?? false, `${name}: ${client.text(result)}`).toBe(false);
      return JSON.parse(client.text(result)) as Record<string, unknown>;
    };
    const contact = await call("hubspot__create_contact", { email: "dana@acme.example", firstname: "Dana" });
    expect(contact).toMatchObject({ id: expect.any(String), email: "dana@acme.example", firstname: "Dana" });
    expect(crm.requests.at(-1)!.token).toBe(accessToken);
    expect(await call("hubspot__search_contacts", { query: "acme" })).toMatchObject({
      total: 1,
      contacts: [{ id: contact["id"], email: "dana@acme.example" }],
    });
    const deal = await call("hubspot__create_deal", { dealname: "Acme renewal", amount: 12000, pipeline: "default" });
    expect(crm.objects.deals.get(String(deal["id"]))).toEqual({
      dealname: "Acme renewal",
      amount: "12000",
      pipeline: "default",
    });
    expect(await call("hubspot__search_deals", { query: "renewal" })).toMatchObject({
      total: 1,
      deals: [{ dealname: "Acme renewal" }],
    });
    expect(new Set(crm.requests.map((r) => r.token))).toEqual(new Set([accessToken]));
    expect(crm.violations).toEqual([]);
    crm.refuseNext(403, "This app hasn't been granted all required scopes to make this call.");
    const refused = await client.callTool({ name: "hubspot__search_deals", arguments: { query: "x" } });
    expect(client.text(refused)).toMatch(/grant the crm\.objects\.contacts\.read .*scope: reconnect at /);
    await client.close();
  });

  it("writes no provider token into any log line", () => {
    const lines = logs.lines();
    expect(lines).toContain('"tool":"hubspot__create_deal"');
    for (const token of started.provider.issuedTokens()) expect(lines.includes(token)).toBe(false);
  });
});
