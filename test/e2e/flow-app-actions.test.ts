import { stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startRedis, type RedisServer } from "../support/redis.ts";
import {
  appChains,
  expectReceived,
  prepareSignIn,
  providerApisEnv,
  startProviderApis,
  type ProviderApis,
} from "../integration/integrations/app-chains.ts";
import { appsControllerEnv, connectApp } from "../integration/integrations/apps-harness.ts";
import { startProviderAndService, type ProviderAndService } from "../integration/integrations/harness.ts";
import { kubectl } from "./support/kubectl.ts";
import { applyCrew, waitFor, type Loose } from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * A flow's `call: tool` on a connected app's action (`gmail/send_email`) on the local cluster, with the real
 * integrations service (redis-server, oidc-provider as Google, Gmail's API fixture): alice connects Gmail through the
 * real sign-in flow; an org-token flow kickoff naming alice runs the method as one Job with no model, whose call
 * reaches Gmail with alice's access token; the tool's answer is `outputs.<method>`. A kickoff that names no user has
 * nobody's apps to act with: the method fails at once, on one pod.
 */
const kubeconfig = inject("kubeconfig");
const gmail = appChains.find((chain) => chain.action === "gmail/send_email")!;
let redis: RedisServer;
let apis: ProviderApis & { stop(): Promise<void> };
let integrations: ProviderAndService;
let system: OwnSystem;

beforeAll(async () => {
  if (installed) return;
  [redis, apis] = await Promise.all([startRedis(), startProviderApis()]);
  integrations = await startProviderAndService({
    redisUrl: redis.url,
    prefix: `test:e2e-flow-apps:${Date.now()}:`,
    extra: providerApisEnv(apis),
  });
  system = await startOwnSystem(kubeconfig, "flow-apps", {
    controller: { env: appsControllerEnv(integrations.service.url) },
  });
});

afterAll(async () => {
  await system?.stop();
  await integrations?.stop();
  await apis?.stop();
  await redis?.stop();
});

const mailFlow = {
  schema: "crewai.flow/v1",
  name: "MailFlow",
  state: {
    type: "json_schema",
    json_schema: { type: "object", properties: { to: { type: "string" } }, required: ["to"] },
  },
  methods: {
    send: {
      start: true,
      do: {
        call: "tool",
        ref: gmail.action,
        with: { to: ["${state.to}"], subject: "Quarterly numbers", body: "Revenue is up 12 %." },
      },
    },
    confirm: { listen: "send", do: { call: "expression", expr: "'mailed ' + state.to" } },
  },
};

async function finished(id: string): Promise<Loose> {
  return waitFor(
    `mail run ${id} ended`,
    async () => {
      const res = await system.api.call(`/flows/mail/status/${id}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.status === "running" ? undefined : res.body;
    },
    120_000,
    250,
  );
}

async function kickoff(body: Record<string, unknown>): Promise<string> {
  await waitFor("mail served", async () => (await system.api.call("/flows/mail/inputs")).status === 200);
  const res = await system.api.call("/flows/mail/kickoff", { body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.kickoff_id as string;
}

const listOf = async (kind: string, selector: string) =>
  JSON.parse(await kubectl(kubeconfig, ["get", kind, "-n", system.namespace, "-l", selector, "-o", "json"]))
    .items as Loose[];

describe.skipIf(installed)("a flow's app action on the local cluster with the real integrations service", () => {
  it("sends alice's mail with her access token in one Job, no model; the app's answer is the method's output", async () => {
    const manifest = { apiVersion: "kubecrew.io/v1alpha1", kind: "Flow", metadata: { name: "mail" }, spec: mailFlow };
    await applyCrew(kubeconfig, system.namespace, stringify(manifest));
    prepareSignIn(integrations.provider, gmail, apis);
    const { accessToken } = await connectApp(
      integrations.service.url,
      integrations.provider,
      "alice",
      gmail.provider,
      gmail.product,
    );
    const since = apis.google.requests.length;
    const id = await kickoff({ inputs: { to: "bob@example.com" }, user: "alice" });
    const final = await finished(id);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.tasks.map((t: Loose) => t.task_id)).toEqual(["send", "confirm"]);
    expect(final.result.outputs.send).toMatch(gmail.answers);
    expect(final.result.output).toBe("mailed bob@example.com");
    expectReceived(gmail, apis, accessToken, since);
    const [child] = await listOf("crewexecutions", `kubecrew.io/flow-execution=${id}`);
    expect(child.spec.requestedBy).toMatchObject({ kind: "org", user: "alice" });
    expect(await listOf("pods", `kubecrew.io/execution=${child.metadata.name}`)).toHaveLength(1);
  });

  it("fails the method on its one pod when the kickoff names no user whose apps it could use", async () => {
    const since = apis.google.requests.length;
    const id = await kickoff({ inputs: { to: "bob@example.com" } });
    const final = await finished(id);
    expect(final.status, JSON.stringify(final)).toBe("error");
    expect(final.error).toContain(
      `Task "send" failed: The tool "gmail__send_email" failed: no user for this execution`,
    );
    expect(apis.google.requests.length).toBe(since);
    const [child] = await listOf("crewexecutions", `kubecrew.io/flow-execution=${id}`);
    expect(await listOf("pods", `kubecrew.io/execution=${child.metadata.name}`)).toHaveLength(1);
  });
});
