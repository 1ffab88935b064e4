import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { verifyAppCredential, type AppCredentialClaims } from "../../core/app-credential.ts";
import { allowedAppActions, appToolName } from "../../core/apps.ts";

/** One tool call the fixture answered: which tool, with which arguments, under which credential's claims. */
export interface AppsCall {
  tool: string;
  args: Record<string, unknown>;
  claims: AppCredentialClaims;
}

export interface AppsMcpFixture {
  /** `<base>/v1/mcp`. */
  url: string;
  /** The base URL (its internal revocation route is `<base>/v1/internal/app-credentials/revoke`). */
  base: string;
  calls: AppsCall[];
  /** Bearer values presented to /v1/mcp, valid or not. */
  bearers: string[];
  refused: number;
  revocations: { executionUid: string; expiresAt: string; authorization: string | undefined }[];
  /** A controller's environment to mint credentials this fixture accepts and to revoke them here with `internalKey`. */
  controllerEnv(internalKey: string): Record<string, string>;
  stop(): Promise<void>;
}

async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

/**
 * What the runner and the controller need of the integrations service's apps side, built with the official MCP
 * TypeScript SDK: `/v1/mcp` (streamable HTTP) accepts only a credential signed with `signingKey` (401 otherwise),
 * lists the `app__action` tools it allows and answers each call with what it was given; the revocation route records
 * what it is sent. The integrations service itself (apps-svc) serves the real thing with the providers behind it.
 */
export async function startAppsMcpFixture(signingKey: string): Promise<AppsMcpFixture> {
  const calls: AppsCall[] = [];
  const bearers: string[] = [];
  const revocations: AppsMcpFixture["revocations"] = [];
  let refused = 0;
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const mcpFor = (claims: AppCredentialClaims) => {
    const server = new McpServer({ name: "kubecrew-apps-fixture", version: "1.0.0" });
    for (const action of allowedAppActions(claims.apps)) {
      const name = appToolName(action);
      server.registerTool(
        name,
        { description: `${action.app} ${action.action}`, inputSchema: { to: z.string().optional() } },
        async (args) => {
          calls.push({ tool: name, args, claims });
          const who = claims.user ?? "no user";
          return { content: [{ type: "text", text: `${name} done for ${who} (${claims.execution})` }] };
        },
      );
    }
    return server;
  };
  const http: Server = createServer((req, res) => {
    void (async () => {
      if (req.url === "/v1/internal/app-credentials/revoke" && req.method === "POST") {
        const body = (await jsonBody(req)) as { executionUid: string; expiresAt: string };
        revocations.push({ ...body, authorization: req.headers.authorization });
        res.writeHead(200, { "content-type": "application/json" }).end('{"revoked":true}');
        return;
      }
      if (!req.url?.startsWith("/v1/mcp")) return void res.writeHead(404).end();
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
      bearers.push(bearer);
      const claims = await verifyAppCredential(signingKey, bearer).catch(() => undefined);
      if (!claims) {
        refused++;
        return void res.writeHead(401, { "content-type": "application/json" }).end('{"error":"Unauthorized"}');
      }
      const sessionId = req.headers["mcp-session-id"];
      const existing = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
      if (existing) return existing.handleRequest(req, res, req.method === "POST" ? await jsonBody(req) : undefined);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => void sessions.set(id, transport),
        onsessionclosed: (id) => void sessions.delete(id),
      });
      await mcpFor(claims).connect(transport);
      await transport.handleRequest(req, res, await jsonBody(req));
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: `${base}/v1/mcp`,
    base,
    calls,
    bearers,
    get refused() {
      return refused;
    },
    revocations,
    controllerEnv: (internalKey) => ({
      KUBECREW_APPS_URL: `${base}/v1/mcp`,
      KUBECREW_APPS_SIGNING_KEY: signingKey,
      KUBECREW_OAUTH_INTERNAL_API_KEY: internalKey,
    }),
    stop: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
