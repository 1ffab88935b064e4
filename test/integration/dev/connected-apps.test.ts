import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { createLogger } from "../../../core/logger.ts";
import { findProviderDefinition } from "../../../integrations/providers.ts";
import { appsSigningKey } from "../integrations/apps-harness.ts";
import { startLlmFixture, quoteToolResults, toolCalls, type LlmFixture } from "../../support/llm-fixture.ts";
import { freePort } from "../../support/ports.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import {
  appChains,
  chainCrewName,
  chainCrewYaml,
  expectReceived,
  prepareSignIn,
  providerApisEnv,
  startProviderApis,
  toolOf,
  type ProviderApis,
} from "../integrations/app-chains.ts";
import {
  capturingLogger,
  internalApiKey,
  returnUrl,
  startProviderAndService,
  TestBrowser,
  type ProviderAndService,
} from "../integrations/harness.ts";

// Issue 14's whole chain under kubecrew dev, once per provider family (app-chains.ts: Google, Microsoft, Salesforce,
// HubSpot, Notion), with the real integrations service (real redis-server, oidc-provider as each provider, the
// providers' API fixtures): alice connects the app through the crew API's /connections and the real sign-in flow,
// kicks off with her user token a crew whose agent declares one action of it, the model (the LLM fixture) calls that
// action, the provider's API fixture receives the documented request with exactly the access token the provider
// issued, the result shows the provider's answer, and no provider token appears in any log, event, step, result or
// webhook.
const redisUrl = inject("redisUrl");
/** How far the integrations service's clock runs ahead of the real one (to let stored access tokens expire). */
let aheadMs = 0;
let apis: ProviderApis & { stop(): Promise<void> };
let llm: LlmFixture;
let integrations: ProviderAndService;
let dev: RunningDev;
const integrationsLogs = capturingLogger();
const devLogs: string[] = [];
let hooks: Server;
let hookUrl: string;
const hookBodies: string[] = [];

beforeAll(async () => {
  [apis, llm] = await Promise.all([startProviderApis(), startLlmFixture()]);
  integrations = await startProviderAndService({
    redisUrl,
    prefix: `test:connected-apps:${Date.now()}:`,
    extra: providerApisEnv(apis),
    logger: integrationsLogs.logger,
    now: () => new Date(Date.now() + aheadMs),
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
    Object.fromEntries(appChains.map((chain) => [`${chainCrewName(chain)}.yaml`, chainCrewYaml(chain, llm.baseURL)])),
    {
      env: {
        KUBECREW_APPS_URL: `${integrations.service.url}/v1/mcp`,
        KUBECREW_APPS_SIGNING_KEY: appsSigningKey,
        KUBECREW_OAUTH_INTERNAL_API_KEY: internalApiKey,
      },
      log: createLogger({ level: "debug" }, { write: (line: string) => void devLogs.push(line) }),
    },
  );
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  await integrations?.stop();
  await apis?.stop();
  await llm?.stop();
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
const connectionOf = (body: Loose, app: string) =>
  (body.connections as { app: string }[]).find((c) => c.app === app) as Record<string, unknown>;
const gmailOf = (body: Loose) => connectionOf(body, "gmail");

describe("connected apps through the crew API and kubecrew dev", () => {
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

  for (const chain of appChains) {
    describe(`${chain.family}: ${chain.action}`, () => {
      const tool = toolOf(chain);
      let accessToken: string;

      it(`connects ${chain.app} through the real sign-in flow from POST /connections/${chain.app}`, async () => {
        const before = integrations.provider.issuedTokens().length;
        integrations.provider.account = { sub: "sub-alice", email: "alice@example.com" };
        prepareSignIn(integrations.provider, chain, apis);
        const link = await json(
          await call(`/connections/${chain.app}`, tokens.alice, { method: "POST", body: { returnUrl } }),
        );
        expect(link.status).toBe(200);
        expect(link.body.url).toMatch(new RegExp(`^${integrations.service.url}/v1/connect/`));
        const end = await new TestBrowser().open(link.body.url as string);
        expect(new URL(end.location!).searchParams.get("status")).toBe("connected");
        accessToken = integrations.provider.issuedTokens()[before]!;

        const listed = connectionOf((await json(await call("/connections", tokens.alice))).body, chain.app);
        expect(listed).toMatchObject({ app: chain.app, connected: true, status: "connected" });
        const scopes = findProviderDefinition(chain.provider)!.products[chain.product]!.scopes;
        expect(listed.scopes).toEqual(expect.arrayContaining(scopes));
        // Bob has connected nothing.
        expect(connectionOf((await json(await call("/connections", tokens.bob))).body, chain.app).connected).toBe(
          false,
        );
      });

      it(`runs alice's kickoff: ${chain.receives.operation} reaches the provider with exactly her access token`, async () => {
        chain.given?.(apis);
        const since = apis[chain.receives.api].requests.length;
        llm.enqueue(toolCalls({ name: tool, input: chain.input }), quoteToolResults());
        const crew = chainCrewName(chain);
        const res = await json(
          await call(`/crews/${crew}/kickoff`, tokens.alice, {
            body: { inputs: {}, taskWebhookUrl: hookUrl, stepWebhookUrl: hookUrl, crewWebhookUrl: hookUrl },
          }),
        );
        expect(res.status).toBe(200);
        const id = res.body.kickoff_id as string;
        const final = await waitFor(async () => {
          const s = (await json(await call(`/crews/${crew}/status/${id}`, tokens.alice))).body;
          return s.status === "running" ? undefined : s;
        }, 45_000);
        expect(final.status, JSON.stringify(final)).toBe("completed");
        expect(final.result.tasks[0].tools_used).toEqual([tool]);
        expectReceived(chain, apis, accessToken, since);
        expect(final.result.output).toContain(`Tool ${tool} returned: `);
        expect(final.result.output).toMatch(chain.answers);

        // No provider token anywhere a user or an operator looks: status, events (steps), webhooks, logs.
        const events = await (await call(`/crews/${crew}/status/${id}/events`, tokens.alice)).text();
        await waitFor(async () =>
          hookBodies.some((b) => b.includes(id) && b.includes('"status":"completed"')) ? true : undefined,
        );
        const provided = integrations.provider.issuedTokens();
        expect(provided.length).toBeGreaterThanOrEqual(2); // the access and refresh tokens at least
        expect(provided).toContain(accessToken);
        const places = {
          status: JSON.stringify(final),
          events,
          webhooks: hookBodies.join("\n"),
          devLogs: devLogs.join(""),
          integrationsLogs: integrationsLogs.lines(),
        };
        expect(events).toContain(tool);
        for (const [place, text] of Object.entries(places)) {
          for (const token of provided) expect(text.includes(token), `a provider token in ${place}`).toBe(false);
          expect(text.includes(internalApiKey), `the internal key in ${place}`).toBe(false);
        }
      }, 60_000);
    });
  }

  // The "an access token expiring mid-run is refreshed once for concurrent tool calls (count at the provider)",
  // through the crew: alice's stored token (from the sign-in above) has expired when her task calls the action 4 times
  // at once; the provider's token endpoint sees one refresh (none for Notion, whose tokens do not expire).
  for (const chain of appChains) {
    it(`${chain.family}: a task's 4 concurrent ${chain.action} calls with an expired token refresh it ${chain.token.refreshedWhenOld ? "once" : "never"}`, async () => {
      const tool = toolOf(chain);
      const api = apis[chain.receives.api];
      const before = api.requests.filter((r) => r.operation === chain.receives.operation).at(-1)!.token;
      aheadMs += 2 * 3600_000; // past any access token's lifetime; the execution's credential lasts a day
      const refreshesBefore = integrations.provider.refreshCount();
      const since = api.requests.length;
      llm.enqueue(
        toolCalls(...Array.from({ length: 4 }, () => ({ name: tool, input: chain.input }))),
        quoteToolResults(),
      );
      const crew = chainCrewName(chain);
      const res = await json(await call(`/crews/${crew}/kickoff`, tokens.alice, { body: { inputs: {} } }));
      const id = res.body.kickoff_id as string;
      const final = await waitFor(async () => {
        const s = (await json(await call(`/crews/${crew}/status/${id}`, tokens.alice))).body;
        return s.status === "running" ? undefined : s;
      }, 45_000);
      expect(final.status, JSON.stringify(final)).toBe("completed");
      expect(final.result.output.split(`Tool ${tool} returned: `)).toHaveLength(5);
      expect(integrations.provider.refreshCount() - refreshesBefore).toBe(chain.token.refreshedWhenOld ? 1 : 0);
      const calls = api.requests.slice(since).filter((r) => r.operation === chain.receives.operation);
      expect(calls).toHaveLength(4);
      const used = [...new Set(calls.map((r) => r.token))];
      expect(used).toHaveLength(1);
      if (chain.token.refreshedWhenOld) {
        expect(used[0]).not.toBe(before);
        expect(integrations.provider.issuedTokens()).toContain(used[0]);
      } else expect(used[0]).toBe(before);
      expect(api.violations).toEqual([]);
      for (const token of integrations.provider.issuedTokens()) {
        expect(JSON.stringify(final).includes(token), "a provider token in the status").toBe(false);
        expect(devLogs.join("").includes(token), "a provider token in the dev log").toBe(false);
        expect(integrationsLogs.lines().includes(token), "a provider token in the integrations log").toBe(false);
      }
    }, 60_000);
  }

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
      {
        env: { KUBECREW_INTEGRATIONS_URL: `http://127.0.0.1:${port}`, KUBECREW_OAUTH_INTERNAL_API_KEY: internalApiKey },
      },
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
