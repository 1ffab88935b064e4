import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startSalesforceFixture, type SalesforceFixture } from "../../support/provider-fixtures/salesforce.ts";
import { appsClient, appsSigningKey, connectApp, credential } from "./apps-harness.ts";
import {
  capturingLogger,
  clients,
  internal,
  startProviderAndService,
  uniquePrefix,
  type ProviderAndService,
} from "./harness.ts";

describe("Salesforce served as MCP at /v1/mcp", () => {
  const redisUrl = inject("redisUrl");
  let org: SalesforceFixture;
  let started: ProviderAndService;
  let service: string;
  const logs = capturingLogger();

  beforeAll(async () => {
    org = await startSalesforceFixture();
    started = await startProviderAndService({
      redisUrl,
      prefix: uniquePrefix("apps-salesforce"),
      extra: (issuer) => ({
        KUBECREW_APPS_SIGNING_KEY: appsSigningKey,
        KUBECREW_SALESFORCE_CLIENT_ID: clients.salesforce.client_id,
        KUBECREW_SALESFORCE_CLIENT_SECRET: clients.salesforce.client_secret,
        KUBECREW_SALESFORCE_AUTHORIZATION_URL: `${issuer}/auth`,
        KUBECREW_SALESFORCE_TOKEN_URL: `${issuer}/token`,
        KUBECREW_SALESFORCE_REVOCATION_URL: `${issuer}/token/revocation`,
      }),
      logger: logs.logger,
    });
    service = started.service.url;
  });
  afterAll(async () => {
    await started?.stop();
    await org?.stop();
  });

  it("creates, updates and queries alice's records at her org with exactly the access token Salesforce issued her", async () => {
    // Salesforce answers the org's API origin with the tokens: the connection keeps it and the actions call there.
    started.provider.instanceUrl = org.url;
    const { accessToken, connectionId } = await connectApp(service, started.provider, "alice", "salesforce", "crm");
    started.provider.instanceUrl = undefined;
    expect((await internal(service, "GET", `/v1/internal/connections/${connectionId}`)).body.account).toMatchObject({
      instanceUrl: org.url,
    });
    const client = await appsClient(service, await credential("alice", ["salesforce"]));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "salesforce__query",
      "salesforce__create_record",
      "salesforce__update_record",
    ]);
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError ?? false, `${name}: ${client.text(result)}`).toBe(false);
      return JSON.parse(client.text(result)) as Record<string, unknown>;
    };
    const created = await call("salesforce__create_record", {
      sobject: "Account",
      fields: { Name: "Acme", Industry: "Retail" },
    });
    expect(created).toEqual({ id: expect.stringMatching(/^001/), success: true });
    expect(org.requests.at(-1)!.token).toBe(accessToken);
    await call("salesforce__update_record", { sobject: "Account", id: created["id"], fields: { Industry: "Energy" } });
    expect(await call("salesforce__query", { soql: "SELECT Id, Name, Industry FROM Account" })).toEqual({
      totalSize: 1,
      done: true,
      records: [{ Id: created["id"], Name: "Acme", Industry: "Energy" }],
    });
    expect(new Set(org.requests.map((r) => r.token))).toEqual(new Set([accessToken]));
    expect(org.violations).toEqual([]);
    org.refuseNext(403, "insufficient access rights on cross-reference id");
    const refused = await client.callTool({ name: "salesforce__query", arguments: { soql: "SELECT Id FROM Account" } });
    expect(client.text(refused)).toMatch(new RegExp(`grant the api scope: reconnect at ${service}/v1/connect/\\S+$`));
    await client.close();
  });

  it("writes no provider token into any log line", () => {
    const lines = logs.lines();
    expect(lines).toContain('"tool":"salesforce__create_record"');
    for (const token of started.provider.issuedTokens()) expect(lines.includes(token)).toBe(false);
  });
});
