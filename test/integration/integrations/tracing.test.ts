import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../support/ports.ts";
import { startNotionFixture, type NotionFixture } from "../../support/provider-fixtures/notion.ts";
import { startCollector, type RunningCollector, type StoredSpan } from "../../support/otel-collector.ts";
import { waitFor } from "../../support/wait-for.ts";
import type { OidcTestProvider } from "../../support/oidc-provider.ts";
import { appsClient, appsSigningKey, connectApp, credential } from "./apps-harness.ts";
import { launchIntegrationsCommand } from "./command-process.ts";
import { clients, integrationsEnv, startProvider, uniquePrefix } from "./harness.ts";

// `kubecrew integrations` as operators run it, with the standard OTEL_* variables, exporting to the real OpenTelemetry
// Collector: a span per request it serves (continuing a caller's traceparent), per app action and per provider call —
// naming the app, never a token; and nothing when tracing is off (without an endpoint no exporter is even made:
// platform/telemetry/tracing.test.ts).
describe("the integrations service's spans", () => {
  const redisUrl = inject("redisUrl");
  let collector: RunningCollector;
  let provider: OidcTestProvider;
  let notion: NotionFixture;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    [collector, provider, notion] = await Promise.all([
      startCollector(),
      startProvider([`http://127.0.0.1:${port}`]),
      startNotionFixture(),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([collector?.stop(), provider?.stop(), notion?.stop()]);
  });

  const env = (servicePort: number, extra: Record<string, string>) =>
    integrationsEnv({
      issuer: provider.issuer,
      publicUrl: `http://127.0.0.1:${servicePort}`,
      redisUrl,
      port: servicePort,
      prefix: uniquePrefix("tracing"),
      extra: {
        KUBECREW_APPS_SIGNING_KEY: appsSigningKey,
        KUBECREW_NOTION_API_BASE_URL: notion.url,
        KUBECREW_NOTION_CLIENT_ID: clients.notion.client_id,
        KUBECREW_NOTION_CLIENT_SECRET: clients.notion.client_secret,
        KUBECREW_NOTION_AUTHORIZATION_URL: `${provider.issuer}/auth`,
        KUBECREW_NOTION_TOKEN_URL: `${provider.issuer}/token`,
        ...extra,
      },
    });

  async function healthy(url: string) {
    await waitFor(async () => ((await fetch(`${url}/health`).catch(() => undefined))?.ok ? true : undefined), 30_000);
  }

  it("exports its requests, app actions and provider calls under the caller's trace, with no secret", async () => {
    const settings = env(port, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint,
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test",
    });
    const { child, done } = launchIntegrationsCommand(settings);
    const url = `http://127.0.0.1:${port}`;
    let accessToken: string;
    let token: string;
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parentId = "00f067aa0ba902b7";
    try {
      await healthy(url);
      ({ accessToken } = await connectApp(url, provider, "alice", "notion", "notes"));
      notion.pages.set("0f3c2a1b-0000-4000-8000-000000000001", { title: "Tide tables", parent: null, lines: ["x"] });
      token = await credential("alice", ["notion"]);
      // The runner's MCP client, in an execution's trace.
      const client = await appsClient(url, token, { traceparent: `00-${traceId}-${parentId}-01` });
      const result = await client.callTool({ name: "notion__search", arguments: { query: "Tide" } });
      expect(result.isError ?? false, client.text(result)).toBe(false);
      await client.close();
    } finally {
      child.kill("SIGTERM");
    }
    expect((await done).code).toBe(0);
    // The SIGTERM path sends what was buffered before it exits.
    const spans: StoredSpan[] = await waitFor(async () => {
      const ours = collector.spans().filter((s) => s.service === "kubecrew-integrations");
      return ours.some((s) => s.name === "app notion__search") ? ours : undefined;
    }, 15_000);

    expect(spans.some((s) => s.name === "GET /health" && s.attributes["http.response.status_code"] === 200)).toBe(true);
    const action = spans.find((s) => s.name === "app notion__search")!;
    expect(action.attributes).toMatchObject({
      "kubecrew.app": "notion",
      "kubecrew.app.action": "search",
      "kubecrew.app.provider": "notion",
    });
    // The action runs inside the MCP request's span, which continues the runner's trace.
    const request = spans.find((s) => s.spanId === action.parentId)!;
    expect(request).toMatchObject({ name: "POST /v1/mcp", traceId, parentId: parentId });
    expect(request.attributes["http.route"]).toBe("/v1/mcp");
    // The provider's API, called for the action: its host and answer, a child of the action.
    const call = spans.find((s) => s.parentId === action.spanId)!;
    expect(call.attributes).toMatchObject({
      "http.request.method": "POST",
      "server.address": "127.0.0.1",
      "server.port": Number(new URL(notion.url).port),
      "http.response.status_code": 200,
    });
    // The sign-in's token exchange at the provider's token endpoint, within the OAuth callback's request.
    const callback = spans.find((s) => s.name === "GET /v1/auth/:provider/callback")!;
    expect(spans.some((s) => s.parentId === callback.spanId && s.attributes["http.request.method"] === "POST")).toBe(
      true,
    );

    const exported = JSON.stringify(spans);
    for (const secret of [
      accessToken,
      token,
      settings.KUBECREW_OAUTH_INTERNAL_API_KEY,
      settings.KUBECREW_OAUTH_COOKIE_SECRET,
      clients.notion.client_secret,
      "Bearer",
      "Tide",
    ]) {
      expect(exported).not.toContain(secret);
    }
  }, 120_000);

  it("exports nothing with OTEL_SDK_DISABLED=true, though the endpoint is set", async () => {
    const offPort = await freePort();
    const { child, done } = launchIntegrationsCommand(
      env(offPort, {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint,
        OTEL_SDK_DISABLED: "true",
        OTEL_SERVICE_NAME: "integrations-untraced",
      }),
    );
    try {
      await healthy(`http://127.0.0.1:${offPort}`);
      await fetch(`http://127.0.0.1:${offPort}/v1/internal/providers`);
    } finally {
      child.kill("SIGTERM");
    }
    expect((await done).code).toBe(0);
    // A traced process sends its spans on SIGTERM, before it exits (the first test waits for them the same way).
    await new Promise((r) => setTimeout(r, 500));
    expect(collector.spans().filter((s) => s.service === "integrations-untraced")).toEqual([]);
  }, 60_000);
});
