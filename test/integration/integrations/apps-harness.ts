import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mintAppCredential, type AppCredentialGrant } from "../../../core/app-credential.ts";
import type { OidcTestProvider } from "../../support/oidc-provider.ts";
import { createConnectLink, internalApiKey, TestBrowser } from "./harness.ts";

export const appsSigningKey = "apps-signing-key-for-tests-0123456789abcdef";

/** The controller's settings for connected apps served by the integrations service at `serviceUrl`. */
export function appsControllerEnv(serviceUrl: string): Record<string, string> {
  return {
    KUBECREW_APPS_URL: `${serviceUrl}/v1/mcp`,
    KUBECREW_APPS_SIGNING_KEY: appsSigningKey,
    KUBECREW_OAUTH_INTERNAL_API_KEY: internalApiKey,
  };
}

let executions = 0;

/** A credential as the controller mints it, for `user` and `apps`, valid for an hour unless told otherwise. */
export function credential(user: string | null, apps: string[], overrides: Partial<AppCredentialGrant> = {}) {
  executions += 1;
  return mintAppCredential(appsSigningKey, {
    executionUid: `00000000-0000-4000-8000-${String(executions).padStart(12, "0")}`,
    execution: `team-a/run-${executions}`,
    user,
    apps,
    expiresAt: new Date(Date.now() + 3600_000),
    ...overrides,
  });
}

/** The official MCP client on /v1/mcp with a credential (and more headers, e.g. a traceparent). */
export async function appsClient(
  serviceUrl: string,
  token: string,
  headers: Record<string, string> = {},
): Promise<Client & { text(r: unknown): string }> {
  const client = new Client({ name: "apps-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${serviceUrl}/v1/mcp`), {
      requestInit: { headers: { ...headers, authorization: `Bearer ${token}` } },
    }),
  );
  return Object.assign(client, {
    text: (result: unknown) =>
      (result as CallToolResult).content.map((c) => (c.type === "text" ? c.text : `<${c.type}>`)).join(""),
  });
}

/**
 * Signs `user` in to `provider/product` through the real sign-in flow; answers the access token the provider issued
 * (the first token of the grant: the provider records access, refresh and ID tokens in that order).
 */
export async function connectApp(
  serviceUrl: string,
  oidc: OidcTestProvider,
  user: string,
  provider: string,
  product: string,
): Promise<{ connectionId: string; accessToken: string }> {
  oidc.account = { sub: `sub-${user}`, email: `${user}@example.com` };
  const before = oidc.issuedTokens().length;
  const link = await createConnectLink(serviceUrl, { userId: user, provider, product });
  const end = await new TestBrowser().open(link.url);
  const connectionId = new URL(end.location!).searchParams.get("connection_id");
  if (!connectionId) throw new Error(`sign-in did not connect: ${end.location ?? end.body}`);
  return { connectionId, accessToken: oidc.issuedTokens()[before]! };
}
