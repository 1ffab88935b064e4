import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { quoteToolResults, startLlmFixture, toolCalls, type LlmFixture } from "../support/llm-fixture.ts";
import { startRedis, type RedisServer } from "../support/redis.ts";
import { waitFor } from "../support/wait-for.ts";
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
} from "../integration/integrations/app-chains.ts";
import { appsControllerEnv, connectApp } from "../integration/integrations/apps-harness.ts";
import {
  capturingLogger,
  internalApiKey,
  startProviderAndService,
  type ProviderAndService,
} from "../integration/integrations/harness.ts";
import { kubectl, kubectlStatus } from "./support/kubectl.ts";
import { finalStatus, kickoff } from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * Issue 14's chain on the local cluster, once per provider family (app-chains.ts: Google, Microsoft, Salesforce,
 * HubSpot, Notion), with the real integrations service (redis-server, oidc-provider as each provider, the providers'
 * API fixtures): alice connects the app through the real sign-in flow; an org-token kickoff naming alice runs a task
 * pod whose agent declares one action of it and whose model (the LLM fixture) calls it; the pod reaches /v1/mcp with
 * the execution credential from its mounted Secret; the provider's API fixture receives the documented request with
 * exactly the access token the provider issued; after the execution the credential is refused; no provider token in
 * any CrewExecution, CrewTaskResult, Event or log.
 */
const kubeconfig = inject("kubeconfig");
/** How far the integrations service's clock runs ahead of the real one (to let stored access tokens expire). */
let aheadMs = 0;
/** One agent with every family's action; its execution (and so its credential) lasts a day. */
const everyAppCrew = (llmBaseUrl: string) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: every-app }
spec:
  llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llmBaseUrl}" }
  agents:
    - { name: assistant, role: Assistant, goal: Act for the user, apps: [${appChains.map((c) => c.action).join(", ")}] }
  tasks:
    - { name: act, agent: assistant, description: Use every app for the user, expectedOutput: Done }
  runner: { retries: 0, executionTimeoutSeconds: 86400 }
`;
let redis: RedisServer;
let apis: ProviderApis & { stop(): Promise<void> };
let llm: LlmFixture;
let integrations: ProviderAndService;
const integrationsLogs = capturingLogger();
let system: OwnSystem;

beforeAll(async () => {
  [redis, apis, llm] = await Promise.all([startRedis(), startProviderApis(), startLlmFixture()]);
  integrations = await startProviderAndService({
    redisUrl: redis.url,
    prefix: `test:e2e-apps:${Date.now()}:`,
    extra: providerApisEnv(apis),
    logger: integrationsLogs.logger,
    now: () => new Date(Date.now() + aheadMs),
  });
  system = await startOwnSystem(kubeconfig, "chain", {
    crews: [...appChains.map((chain) => chainCrewYaml(chain, llm.baseURL)), everyAppCrew(llm.baseURL)],
    controller: { env: appsControllerEnv(integrations.service.url) },
  });
});

afterAll(async () => {
  await system?.stop();
  await integrations?.stop();
  await apis?.stop();
  await llm?.stop();
  await redis?.stop();
});

describe.skipIf(installed)("connected apps on the local cluster with the real integrations service", () => {
  for (const chain of appChains) {
    it(`${chain.family}: a task pod calls ${chain.action} with alice's access token; afterwards the credential is refused`, async () => {
      const { api, namespace } = system;
      const controller = system.controllers[0]!;
      prepareSignIn(integrations.provider, chain, apis);
      const { accessToken } = await connectApp(
        integrations.service.url,
        integrations.provider,
        "alice",
        chain.provider,
        chain.product,
      );
      chain.given?.(apis);
      const since = apis[chain.receives.api].requests.length;
      const tool = toolOf(chain);
      llm.enqueue(toolCalls({ name: tool, input: chain.input }), quoteToolResults());
      const crew = chainCrewName(chain);
      const id = await kickoff(api, crew, { user: "alice" });
      const secret = await waitFor(async () => {
        const found = await kubectlStatus(kubeconfig, ["get", "secret", `${id}-apps`, "-n", namespace, "-o", "json"]);
        return found.code === 0 ? (JSON.parse(found.stdout) as { data: { credential: string } }) : undefined;
      }, 30_000);
      const credential = Buffer.from(secret.data.credential, "base64").toString("utf8");

      const final = await finalStatus(api, crew, id);
      expect(final.status, JSON.stringify(final)).toBe("completed");
      expect(final.result.tasks[0].tools_used).toEqual([tool]);
      expect(final.result.output).toContain(`Tool ${tool} returned: `);
      expect(final.result.output).toMatch(chain.answers);
      expectReceived(chain, apis, accessToken, since);

      // Revoked when the execution finished: the integrations service refuses the credential from then on.
      const refused = await waitFor(async () => {
        const res = await fetch(`${integrations.service.url}/v1/mcp`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${credential}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        });
        await res.body?.cancel();
        return res.status === 401 ? res.status : undefined;
      }, 20_000);
      expect(refused).toBe(401);
      expect(apis[chain.receives.api].requests.length - since).toBe(1);

      const provided = integrations.provider.issuedTokens();
      expect(provided.length).toBeGreaterThanOrEqual(2); // the access and refresh tokens at least
      expect(provided).toContain(accessToken);
      const places: Record<string, string> = {
        execution: await kubectl(kubeconfig, ["get", "crewexecution", id, "-n", namespace, "-o", "json"]),
        results: await kubectl(kubeconfig, ["get", "crewtaskresults", "-n", namespace, "-o", "json"]),
        events: await kubectl(kubeconfig, ["get", "events", "-n", namespace, "-o", "json"]),
        controllerLog: await readFile(controller.logFile, "utf8"),
        podLog: await kubectl(kubeconfig, ["logs", `job/${id}-0`, "-n", namespace]).catch(() => ""),
        status: JSON.stringify(final),
        integrationsLog: integrationsLogs.lines(),
      };
      for (const [place, text] of Object.entries(places)) {
        for (const token of provided) expect(text.includes(token), `a provider token in ${place}`).toBe(false);
        expect(text.includes(internalApiKey), `the internal key in ${place}`).toBe(false);
      }
    }, 150_000);
  }

  it("one task calls every family's action twice at once with every stored token expired: one refresh per family whose tokens expire", async () => {
    const { api, namespace } = system;
    const controller = system.controllers[0]!;
    const lastToken = (chain: (typeof appChains)[number]) =>
      apis[chain.receives.api].requests.filter((r) => r.operation === chain.receives.operation).at(-1)!.token;
    const before = new Map(appChains.map((chain) => [chain, lastToken(chain)]));
    const since = new Map(appChains.map((chain) => [chain, apis[chain.receives.api].requests.length]));
    aheadMs += 2 * 3600_000; // past every access token's lifetime (the chains above connected alice's five apps)
    const refreshesBefore = integrations.provider.refreshCount();
    llm.enqueue(
      toolCalls(...appChains.flatMap((chain) => [1, 2].map(() => ({ name: toolOf(chain), input: chain.input })))),
      quoteToolResults(),
    );
    const id = await kickoff(api, "every-app", { user: "alice" });
    const final = await finalStatus(api, "every-app", id);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect([...final.result.tasks[0].tools_used].sort()).toEqual(appChains.map(toolOf).sort());
    const refreshing = appChains.filter((chain) => chain.token.refreshedWhenOld);
    expect(integrations.provider.refreshCount() - refreshesBefore).toBe(refreshing.length);
    for (const chain of appChains) {
      const calls = apis[chain.receives.api].requests
        .slice(since.get(chain))
        .filter((r) => r.operation === chain.receives.operation);
      expect(calls, chain.family).toHaveLength(2);
      const used = [...new Set(calls.map((r) => r.token))];
      expect(used, `${chain.family}: one token for both calls`).toHaveLength(1);
      if (chain.token.refreshedWhenOld) {
        expect(used[0], `${chain.family}: refreshed`).not.toBe(before.get(chain));
        expect(integrations.provider.issuedTokens()).toContain(used[0]);
      } else expect(used[0], `${chain.family}: the token it had`).toBe(before.get(chain));
    }
    const provided = integrations.provider.issuedTokens();
    const places: Record<string, string> = {
      results: await kubectl(kubeconfig, ["get", "crewtaskresults", "-n", namespace, "-o", "json"]),
      controllerLog: await readFile(controller.logFile, "utf8"),
      podLog: await kubectl(kubeconfig, ["logs", `job/${id}-0`, "-n", namespace]).catch(() => ""),
      status: JSON.stringify(final),
      integrationsLog: integrationsLogs.lines(),
    };
    for (const [place, text] of Object.entries(places))
      for (const token of provided) expect(text.includes(token), `a provider token in ${place}`).toBe(false);
  }, 150_000);
});
