import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { createLogger } from "../../../core/logger.ts";
import { startGoogleFixture, type GoogleFixture } from "../../support/provider-fixtures/google.ts";
import { freePort } from "../../support/ports.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { appsSigningKey } from "../integrations/apps-harness.ts";
import {
  capturingLogger,
  internalApiKey,
  returnUrl,
  startProviderAndService,
  TestBrowser,
  type ProviderAndService,
} from "../integrations/harness.ts";

// Issue 14's whole chain under kubecrew dev, with the real integrations service (real redis-server, oidc-provider as
// Google, the Gmail API fixture): alice connects Gmail through the crew API's /connections and the real sign-in flow,
// kicks off with her user token a crew whose agent declares gmail/send_email, the Gmail fixture receives the message
// with exactly the access token the provider issued, the result shows the tool's output, and no provider token appears
// in any log, event, step, result or webhook.
const redisUrl = inject("redisUrl");
let google: GoogleFixture;
let integrations: ProviderAndService;
let dev: RunningDev;
const integrationsLogs = capturingLogger();
const devLogs: string[] = [];
let hooks: Server;
let hookUrl: string;
const hookBodies: string[] = [];

const crew = `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: mailer }
spec:
  llm: { provider: mock, model: call-tools }
  agents:
    - { name: assistant, role: Assistant, goal: Tell Bob the numbers, apps: [gmail/send_email] }
  tasks:
    - { name: send, agent: assistant, description: Mail Bob the quarterly numbers, expectedOutput: Sent }
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;

beforeAll(async () => {
  google = await startGoogleFixture();
  integrations = await startProviderAndService({
    redisUrl,
    prefix: `test:connected-apps:${Date.now()}:`,
    extra: { KUBECREW_APPS_SIGNING_KEY: appsSigningKey, GOOGLE_API_BASE_URL: google.url },
    logger: integrationsLogs.logger,
  });
  hooks = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      hookBodies.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, "127.0.0.1", resolve));
  hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`;
  dev = await startTestDev(
    { "mailer.yaml": crew },
    {
      env: {
        KUBECREW_APPS_URL: `${integrations.service.url}/v1/mcp`,
        KUBECREW_APPS_SIGNING_KEY: appsSigningKey,
        OAUTH_INTERNAL_API_KEY: internalApiKey,
      },
      log: createLogger({ level: "debug" }, { write: (line: string) => void devLogs.push(line) }),
    },
  );
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  await integrations?.stop();
  await google?.stop();
  hooks?.close();
});

const call = (path: string, token: string, init: { method?: string; body?: unknown } = {}) =>
  fetch(`${dev.url}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
/** JSON the tests assert on field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;
const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Loose });
const gmailOf = (body: Loose) =>
  (body.connections as { app: string }[]).find((c) => c.app === "gmail") as Record<string, unknown>;

describe("connected apps through the crew API and kubecrew dev", () => {
  let accessToken: string;

  it("lists every app, not connected, to a user token; refuses an org token and unknown apps", async () => {
    const listed = await json(await call("/connections", tokens.alice));
    expect(listed.status).toBe(200);
    expect(listed.body.connections).toHaveLength(13);
    expect(gmailOf(listed.body)).toEqual({
      app: "gmail",
      connected: false,
      status: "not_connected",
      account: null,
      scopes: [],
    });
    expect(await json(await call("/connections", tokens.org))).toEqual({
      status: 403,
      body: { error: "Forbidden", message: "Connections belong to users: call /connections with a user token" },
    });
    const unknown = await json(await call("/connections/gmial", tokens.alice, { method: "POST", body: {} }));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: "App not found" });
    expect(unknown.body.message).toContain('No app named "gmial"; apps: gmail, google_calendar');
  });

  it("connects Gmail through the real sign-in flow from POST /connections/gmail", async () => {
    const before = integrations.provider.issuedTokens().length;
    integrations.provider.account = { sub: "sub-alice", email: "alice@example.com" };
    const link = await json(await call("/connections/gmail", tokens.alice, { method: "POST", body: { returnUrl } }));
    expect(link.status).toBe(200);
    expect(link.body.url).toMatch(new RegExp(`^${integrations.service.url}/v1/connect/`));
    const end = await new TestBrowser().open(link.body.url as string);
    expect(new URL(end.location!).searchParams.get("status")).toBe("connected");
    accessToken = integrations.provider.issuedTokens()[before]!;

    const listed = await json(await call("/connections", tokens.alice));
    expect(gmailOf(listed.body)).toMatchObject({
      app: "gmail",
      connected: true,
      status: "connected",
      account: { email: "alice@example.com" },
    });
    expect(gmailOf(listed.body).scopes).toContain("https://www.googleapis.com/auth/gmail.modify");
    // Bob has connected nothing.
    expect(gmailOf((await json(await call("/connections", tokens.bob))).body).connected).toBe(false);
  });

  it("runs alice's kickoff with her Gmail: the fixture gets exactly her access token, the result the tool output", async () => {
    const res = await json(
      await call("/crews/mailer/kickoff", tokens.alice, {
        body: { inputs: {}, taskWebhookUrl: hookUrl, stepWebhookUrl: hookUrl, crewWebhookUrl: hookUrl },
      }),
    );
    expect(res.status).toBe(200);
    const id = res.body.kickoff_id as string;
    const final = await waitFor(async () => {
      const s = (await json(await call(`/crews/mailer/status/${id}`, tokens.alice))).body;
      return s.status === "running" ? undefined : s;
    }, 45_000);
    expect(final.status).toBe("completed");
    expect(final.result.tasks[0].tools_used).toEqual(["gmail__send_email"]);
    expect(google.sent, final.result.output).toHaveLength(1);
    expect(google.sent[0]!.token).toBe(accessToken);
    expect(final.result.output).toContain("gmail__send_email");
    expect(final.result.output).toMatch(/"sent":\s*true/);

    // No provider token anywhere a user or an operator looks: status, events (steps), webhooks, logs.
    const events = await (await call(`/crews/mailer/status/${id}/events`, tokens.alice)).text();
    await waitFor(async () => (hookBodies.some((b) => b.includes('"status":"completed"')) ? true : undefined));
    const provided = integrations.provider.issuedTokens();
    expect(provided.length).toBeGreaterThanOrEqual(2);
    const places = {
      status: JSON.stringify(final),
      events,
      webhooks: hookBodies.join("\n"),
      devLogs: devLogs.join(""),
      integrationsLogs: integrationsLogs.lines(),
    };
    expect(events).toContain("gmail__send_email");
    for (const [place, text] of Object.entries(places)) {
      for (const token of provided) expect(text.includes(token), `a provider token in ${place}`).toBe(false);
      expect(text.includes(internalApiKey), `the internal key in ${place}`).toBe(false);
    }
  }, 60_000);

  it("disconnects Gmail with DELETE /connections/gmail; a second delete is 404", async () => {
    expect(await json(await call("/connections/gmail", tokens.alice, { method: "DELETE" }))).toEqual({
      status: 200,
      body: { app: "gmail", deleted: true },
    });
    expect(gmailOf((await json(await call("/connections", tokens.alice))).body).connected).toBe(false);
    const again = await json(await call("/connections/gmail", tokens.alice, { method: "DELETE" }));
    expect(again.status).toBe(404);
    expect(again.body.error).toBe("Not connected");
  });

  it("answers 503 at once when the integrations service cannot be reached", async () => {
    const port = await freePort(); // nothing listens there
    const lonely = await startTestDev(
      {},
      { env: { KUBECREW_INTEGRATIONS_URL: `http://127.0.0.1:${port}`, OAUTH_INTERNAL_API_KEY: internalApiKey } },
    );
    try {
      const started = performance.now();
      const res = await json(await call2(lonely, "/connections"));
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        error: "Service Unavailable",
        message: "The integrations service is unavailable; try again shortly",
      });
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      await lonely.stop();
    }
  });
});

const call2 = (server: RunningDev, path: string) =>
  fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${tokens.alice}` } });
