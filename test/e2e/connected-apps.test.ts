import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startGoogleFixture, type GoogleFixture } from "../support/provider-fixtures/google.ts";
import { startRedis, type RedisServer } from "../support/redis.ts";
import { waitFor } from "../support/wait-for.ts";
import { appsSigningKey, connectApp } from "../integration/integrations/apps-harness.ts";
import {
  capturingLogger,
  internalApiKey,
  startProviderAndService,
  type ProviderAndService,
} from "../integration/integrations/harness.ts";
import { kubectl, kubectlStatus } from "./support/kubectl.ts";
import {
  applyCrew,
  createNamespace,
  deleteNamespace,
  finalStatus,
  kickoff,
  startClusterApi,
  startControllerProcess,
  type ClusterApi,
  type ControllerProcess,
} from "./support/fixture.ts";
import { installed } from "./support/installed.ts";

/**
 * Issue 14's chain on the local cluster with the real integrations service (redis-server, oidc-provider as Google,
 * the Gmail fixture): alice connects Gmail through the real sign-in flow; an org-token kickoff naming alice runs a
 * task pod whose agent declares gmail/send_email; the pod reaches /v1/mcp with the execution credential from its
 * mounted Secret; the Gmail fixture receives the message with exactly the access token the provider issued; after
 * the execution the credential is refused; no provider token in any CrewExecution, CrewTaskResult, Event or log.
 */
const kubeconfig = inject("kubeconfig");
let redis: RedisServer;
let google: GoogleFixture;
let integrations: ProviderAndService;
const integrationsLogs = capturingLogger();
let namespace: string;
let controller: ControllerProcess;
let api: ClusterApi;

beforeAll(async () => {
  redis = await startRedis();
  google = await startGoogleFixture();
  integrations = await startProviderAndService({
    redisUrl: redis.url,
    prefix: `test:e2e-apps:${Date.now()}:`,
    extra: { KUBECREW_APPS_SIGNING_KEY: appsSigningKey, GOOGLE_API_BASE_URL: google.url },
    logger: integrationsLogs.logger,
  });
  namespace = await createNamespace(kubeconfig, "chain");
  await applyCrew(
    kubeconfig,
    namespace,
    `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: mailer }
spec:
  inputs: [{ name: topic }]
  llm: { provider: mock, model: call-tools }
  agents:
    - { name: assistant, role: Assistant, goal: "Mail Bob about {topic}", apps: [gmail/send_email] }
  tasks:
    - { name: send, agent: assistant, description: "Mail Bob about {topic}", expectedOutput: Sent }
  runner: { retries: 0 }
`,
  );
  controller = await startControllerProcess(kubeconfig, namespace, {
    env: {
      KUBECREW_APPS_URL: `${integrations.service.url}/v1/mcp`,
      KUBECREW_APPS_SIGNING_KEY: appsSigningKey,
      OAUTH_INTERNAL_API_KEY: internalApiKey,
    },
  });
  api = await startClusterApi(kubeconfig, namespace);
});

afterAll(async () => {
  await api?.stop();
  await controller?.kill("SIGTERM");
  if (namespace) await deleteNamespace(kubeconfig, namespace);
  await integrations?.stop();
  await google?.stop();
  await redis?.stop();
});

describe.skipIf(installed)("connected apps on the local cluster with the real integrations service", () => {
  it("sends alice's mail from a task pod with her access token; afterwards the credential is refused", async () => {
    const { accessToken } = await connectApp(
      integrations.service.url,
      integrations.provider,
      "alice",
      "google",
      "gmail",
    );
    const id = await kickoff(api, "mailer", { user: "alice" });
    const secret = await waitFor(async () => {
      const found = await kubectlStatus(kubeconfig, ["get", "secret", `${id}-apps`, "-n", namespace, "-o", "json"]);
      return found.code === 0 ? (JSON.parse(found.stdout) as { data: { credential: string } }) : undefined;
    }, 30_000);
    const credential = Buffer.from(secret.data.credential, "base64").toString("utf8");

    const final = await finalStatus(api, "mailer", id);
    expect(final.status).toBe("completed");
    expect(final.result.tasks[0].tools_used).toEqual(["gmail__send_email"]);
    expect(final.result.output).toMatch(/"sent":\s*true/);
    expect(google.sent).toHaveLength(1);
    expect(google.sent[0]!.token).toBe(accessToken);

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
    expect(google.sent).toHaveLength(1);

    const provided = integrations.provider.issuedTokens();
    expect(provided.length).toBeGreaterThanOrEqual(2);
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
});
