import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { appsSigningKey } from "../integrations/apps-harness.ts";
import {
  appChains,
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
import { crewaiPython } from "../../support/crewai.ts";
import { crewaiDelegateTool, crewaiMcpToolName } from "../../support/crewai-tool-names.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { answer, startLlmFixture, toolCalls, toolsOffered, type LlmFixture } from "../../support/llm-fixture.ts";

// A hierarchical crew on the crewai runtime, run whole by `kubecrew dev`, whose mailer (not the manager, the run's own
// agent) declares Gmail's send action: the execution's app credential reaches the one run, CrewAI's manager delegates
// to the mailer, the mailer calls the action through the real integrations service (real redis-server, oidc-provider
// as Google, Google's API fixture), and Gmail's API receives exactly the access token alice's sign-in issued.
const chain = appChains.find((c) => c.app === "gmail")!;
const redisUrl = inject("redisUrl");
let apis: ProviderApis & { stop(): Promise<void> };
let llm: LlmFixture;
let integrations: ProviderAndService;
let dev: RunningDev;
let python: string;

const crew = () => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: whole-apps }
spec:
  runtime: crewai
  process: hierarchical
  llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llm.baseURL}" }
  managerLlm: { provider: openai-compatible, model: manager-model, baseURL: "${llm.baseURL}" }
  agents:
    - { name: researcher, role: Researcher, goal: Find facts }
    - { name: mailer, role: Mailer, goal: Act for the user, apps: [${chain.action}] }
  tasks:
    - { name: mail, agent: mailer, description: "Mail bob the numbers", expectedOutput: Done }
  runner: { retries: 0, taskTimeoutSeconds: 120, executionTimeoutSeconds: 86400 }
`;

beforeAll(async () => {
  python = crewaiPython();
  [apis, llm] = await Promise.all([startProviderApis(), startLlmFixture()]);
  integrations = await startProviderAndService({
    redisUrl,
    prefix: `test:whole-apps:${Date.now()}:`,
    extra: providerApisEnv(apis),
    logger: capturingLogger().logger,
  });
  const runnerEnv: NodeJS.ProcessEnv = { ...process.env };
  delete runnerEnv.KUBECREW_CREWAI_PYTHON;
  dev = await startTestDev(
    { "whole-apps.yaml": crew() },
    {
      runnerEnv,
      env: {
        KUBECREW_APPS_URL: `${integrations.service.url}/v1/mcp`,
        KUBECREW_APPS_SIGNING_KEY: appsSigningKey,
        KUBECREW_OAUTH_INTERNAL_API_KEY: internalApiKey,
      },
    },
  );
}, 180_000);
afterAll(async () => {
  await dev?.stop();
  await integrations?.stop();
  await apis?.stop();
  await llm?.stop();
});

const call = (path: string, body?: unknown) =>
  fetch(`${dev.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${tokens.alice}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

interface Status {
  status: string;
  error?: string;
  result?: { tasks: { task_id: string; output: string; tools_used?: string[] }[] };
}

describe("a declared hierarchical crew on the crewai runtime with a connected app", { timeout: 300_000 }, () => {
  it("gives the delegated agent its app: the action reaches Gmail's API with alice's access token", async () => {
    integrations.provider.account = { sub: "sub-alice", email: "alice@example.com" };
    prepareSignIn(integrations.provider, chain, apis);
    const before = integrations.provider.issuedTokens().length;
    const link = (await (await call(`/connections/${chain.app}`, { returnUrl })).json()) as { url: string };
    const end = await new TestBrowser().open(link.url);
    expect(new URL(end.location!).searchParams.get("status")).toBe("connected");
    const accessToken = integrations.provider.issuedTokens()[before]!;

    const delegate = await crewaiDelegateTool(python);
    const tool = await crewaiMcpToolName(python, `${integrations.service.url}/v1/mcp`, toolOf(chain));
    const since = apis[chain.receives.api].requests.length;
    llm.enqueue(
      toolCalls({ name: delegate, input: { task: "Mail bob the numbers", context: "", coworker: "Mailer" } }),
      toolCalls({ name: tool, input: chain.input }),
      answer("Sent to bob."),
      answer("The mail is sent."),
    );
    const res = await call("/crews/whole-apps/kickoff", { inputs: {} });
    expect(res.status).toBe(200);
    const id = ((await res.json()) as { kickoff_id: string }).kickoff_id;
    const final = await waitFor(async () => {
      const s = (await (await call(`/crews/whole-apps/status/${id}`)).json()) as Status;
      return s.status === "running" ? undefined : s;
    }, 200_000);
    expect(final.error, JSON.stringify(final)).toBeUndefined();
    expect(final.result!.tasks.map((t) => [t.task_id, t.output])).toEqual([["mail", "The mail is sent."]]);
    expect(final.result!.tasks[0]!.tools_used).toEqual(expect.arrayContaining([delegate, tool]));
    // The mailer was offered exactly its one action; the action reached Gmail once, with alice's token.
    expect(toolsOffered(llm.requests[1]!.body).map((t) => t.name)).toEqual([tool]);
    expectReceived(chain, apis, accessToken, since);
    expect(JSON.stringify(final)).not.toContain(accessToken);
  });
});
