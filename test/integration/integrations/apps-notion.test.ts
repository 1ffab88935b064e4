import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startNotionFixture, type NotionFixture } from "../../support/provider-fixtures/notion.ts";
import { appsClient, appsSigningKey, connectApp, credential } from "./apps-harness.ts";
import { capturingLogger, clients, startProviderAndService, uniquePrefix, type ProviderAndService } from "./harness.ts";

describe("Notion served as MCP at /v1/mcp", () => {
  const redisUrl = inject("redisUrl");
  let notion: NotionFixture;
  let started: ProviderAndService;
  let service: string;
  const logs = capturingLogger();

  beforeAll(async () => {
    notion = await startNotionFixture();
    started = await startProviderAndService({
      redisUrl,
      prefix: uniquePrefix("apps-notion"),
      extra: (issuer) => ({
        KUBECREW_APPS_SIGNING_KEY: appsSigningKey,
        KUBECREW_NOTION_API_BASE_URL: notion.url,
        KUBECREW_NOTION_CLIENT_ID: clients.notion.client_id,
        KUBECREW_NOTION_CLIENT_SECRET: clients.notion.client_secret,
        KUBECREW_NOTION_AUTHORIZATION_URL: `${issuer}/auth`,
        KUBECREW_NOTION_TOKEN_URL: `${issuer}/token`,
      }),
      logger: logs.logger,
    });
    service = started.service.url;
  });
  afterAll(async () => {
    await started?.stop();
    await notion?.stop();
  });

  it("creates, finds and reads alice's pages with exactly the access token Notion issued her", async () => {
    const { accessToken } = await connectApp(service, started.provider, "alice", "notion", "notes");
    notion.pages.set("0f3c2a1b-0000-4000-8000-000000000001", { title: "Team wiki", parent: null, lines: ["Welcome"] });
    const client = await appsClient(service, await credential("alice", ["notion"]));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "notion__search",
      "notion__get_page",
      "notion__create_page",
    ]);
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError ?? false, `${name}: ${client.text(result)}`).toBe(false);
      return JSON.parse(client.text(result)) as Record<string, unknown>;
    };
    const created = await call("notion__create_page", {
      parentPageId: "0f3c2a1b-0000-4000-8000-000000000001",
      title: "Meeting notes",
      text: "Decided: ship Friday\nOwner: alice",
    });
    expect(notion.pages.get(String(created["id"]))).toEqual({
      title: "Meeting notes",
      parent: "0f3c2a1b-0000-4000-8000-000000000001",
      lines: ["Decided: ship Friday", "Owner: alice"],
    });
    expect(notion.requests.at(-1)!.token).toBe(accessToken);
    expect(await call("notion__search", { query: "Meeting" })).toEqual({
      results: [{ id: created["id"], object: "page", title: "Meeting notes", url: expect.any(String) }],
    });
    expect(await call("notion__get_page", { pageId: created["id"] })).toMatchObject({
      title: "Meeting notes",
      text: "Decided: ship Friday\nOwner: alice",
      truncated: false,
    });
    expect(new Set(notion.requests.map((r) => r.token))).toEqual(new Set([accessToken]));
    expect(notion.violations).toEqual([]);
    const missing = await client.callTool({ name: "notion__get_page", arguments: { pageId: "nope" } });
    expect(client.text(missing)).toBe("Notion answered 404 to notion__get_page: Could not find page with ID: nope.");
    await client.close();
  });

  it("writes no provider token into any log line", () => {
    const lines = logs.lines();
    expect(lines).toContain('"tool":"notion__create_page"');
    for (const token of started.provider.issuedTokens()) expect(lines.includes(token)).toBe(false);
  });
});
