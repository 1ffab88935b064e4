import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { appsClient, appsSigningKey, connectApp, credential } from "./apps-harness.ts";
import { clients, startProviderAndService, uniquePrefix, type ProviderAndService } from "./harness.ts";

// Every provider SDK sends through the one outbound URL policy (a fetch, an undici dispatcher or a Node agent): with
// each API root on a loopback address the policy refuses (only 127.0.0.1 is allowed here), each tool call is refused
// before any connection, and says so.
let started: ProviderAndService;
const refused = "https://127.0.0.2:1234/";

beforeAll(async () => {
  started = await startProviderAndService({
    redisUrl: inject("redisUrl"),
    prefix: uniquePrefix("apps-outbound"),
    extra: (issuer) => ({
      KUBECREW_APPS_SIGNING_KEY: appsSigningKey,
      KUBECREW_GOOGLE_API_BASE_URL: refused,
      KUBECREW_MICROSOFT_GRAPH_BASE_URL: refused,
      KUBECREW_HUBSPOT_API_BASE_URL: refused,
      KUBECREW_NOTION_API_BASE_URL: refused,
      KUBECREW_SALESFORCE_INSTANCE_URL: refused,
      KUBECREW_NOTION_CLIENT_ID: clients.notion.client_id,
      KUBECREW_NOTION_CLIENT_SECRET: clients.notion.client_secret,
      KUBECREW_NOTION_AUTHORIZATION_URL: `${issuer}/auth`,
      KUBECREW_NOTION_TOKEN_URL: `${issuer}/token`,
      KUBECREW_SALESFORCE_CLIENT_ID: clients.salesforce.client_id,
      KUBECREW_SALESFORCE_CLIENT_SECRET: clients.salesforce.client_secret,
      KUBECREW_SALESFORCE_AUTHORIZATION_URL: `${issuer}/auth`,
      KUBECREW_SALESFORCE_TOKEN_URL: `${issuer}/token`,
    }),
  });
});
afterAll(() => started?.stop());

it("refuses every provider family's call at the outbound URL policy", async () => {
  const url = started.service.url;
  const calls: [string, string, string, Record<string, unknown>][] = [
    ["google", "gmail", "gmail__fetch_emails", {}],
    ["microsoft", "outlook", "microsoft_outlook__list_messages", {}],
    ["hubspot", "crm", "hubspot__search_contacts", { query: "a" }],
    ["notion", "notes", "notion__search", { query: "a" }],
    ["salesforce", "crm", "salesforce__query", { soql: "SELECT Id FROM Account" }],
  ];
  for (const [provider, product] of calls) await connectApp(url, started.provider, "olga", provider, product);
  const client = await appsClient(
    url,
    await credential("olga", ["gmail", "microsoft_outlook", "hubspot", "notion", "salesforce"]),
  );
  for (const [, , tool, args] of calls) {
    const result = await client.callTool({ name: tool, arguments: args });
    expect(result.isError, tool).toBe(true);
    expect(client.text(result), tool).toMatch(/could not be called: the outbound URL policy refuses its address$/);
  }
  await client.close();
});
