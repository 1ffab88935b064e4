import { startTracing } from "../platform/telemetry/tracing.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Router } from "express";
import type { Redis } from "ioredis";
import { AdminKeyGuesses } from "../api/auth/admin-key-guesses.ts";
import { createMemoryAuth, createRedisAuth } from "../api/auth/api-auth.ts";
import { MemoryTokenStore } from "../api/auth/memory-token-store.ts";
import { connectRedis, redisAnswers, redisReady } from "../platform/redis-client.ts";
import { newToken } from "../api/auth/token-format.ts";
import type { TokenStore } from "../api/auth/token-store.ts";
import type { ExtraPaths } from "../api/openapi.ts";
import type { ApiMetrics } from "../api/metrics.ts";
import { startApi } from "../api/server.ts";
import { IntegrationsClient } from "../api/connections/integrations-client.ts";
import { createConsole } from "../console/console.ts";
import type { Crew, LlmConfig } from "../core/crew.ts";
import type { ExecutionSpec } from "../core/execution.ts";
import { DEFAULT_LOCAL_MODEL } from "../core/local-models.ts";
import type { Logger } from "../core/logger.ts";
import { runnerPolicyFromEnv } from "../core/outbound/config.ts";
import { createOutboundClient, type Resolver } from "../platform/outbound/outbound-fetch.ts";
import { loadCrews } from "./crew-catalog.ts";
import { embeddedFlows } from "./embedded-flows.ts";
import type { DevConfig } from "./config.ts";
import { LocalAppCredentials } from "./app-credentials.ts";
import { crewaiPythonEnv } from "./crewai-python.ts";
import { LocalExecutions } from "./local-executions.ts";
import { EmbeddedIntegrations, type EmbeddedIntegrationsInfo } from "./embedded-integrations.ts";
import { withoutIntegrationsSecrets } from "./embedded-integrations-config.ts";
import { MemoryStore } from "../integrations/memory-store.ts";
import { RedisStore } from "../integrations/redis-store.ts";
import type { IntegrationsStore } from "../integrations/store.ts";
import { devSignIn, type DevSignIn } from "./console-sign-in.ts";

/** The CLI's entry point that runs each task: cli/main.ts in a checkout, cli/main.js in the image (compiled). */
const CLI_MAIN = fileURLToPath(new URL(`../cli/main${extname(import.meta.url)}`, import.meta.url));

export interface RunningDev {
  url: string;
  crews: Crew[];
  defaultCrew: string | undefined;
  llm: LlmConfig;
  /** The tokens printed at startup (memory token store only). */
  orgToken?: string;
  userToken?: string;
  /** How the console signs people in, and the admin key when it was generated for this run (for the banner). */
  consoleSignIn: { how: DevSignIn["how"]; generatedAdminKey?: string };
  /** The kickoff_ids of the executions this process holds (for tests: what a request did or did not create). */
  executionIds(): string[];
  /** The spec of one execution: its requestedBy records the user its connected apps act as. */
  executionSpec(id: string): ExecutionSpec | undefined;
  /** The integrations service run in this process (connected apps), unless one elsewhere is configured. */
  integrations?: EmbeddedIntegrationsInfo & { store: IntegrationsStore };
  stop(): Promise<void>;
}

/** The model crews use when they name none: the configured one, or the mock test provider. */
export function devLlm(config: DevConfig): LlmConfig {
  const { provider, model, baseURL } = config.llm;
  if (!provider || provider === "mock") return { provider: "mock", model: model ?? "mock" };
  if (provider === "local") return { provider, model: model ?? DEFAULT_LOCAL_MODEL };
  return {
    provider,
    model: model ?? (provider === "anthropic" ? "claude-sonnet-4-5" : "gpt-4o-mini"),
    ...(baseURL ? { baseURL } : {}),
  };
}

/**
 * `kubecrew dev`: every component in one process — the crew API, executions in memory, each task a child process
 * of the same runner the Job pods run, the integrations service at /oauthsvc (connected apps). No cluster; Redis only
 * when KUBECREW_REDIS_URL is set (tokens, clients, rate limits, connections).
 */
export async function startDev(
  config: DevConfig,
  log: Logger,
  options: {
    tokens?: TokenStore;
    env?: NodeJS.ProcessEnv;
    resolver?: Resolver;
    /** The API's request metrics, counted for a test (kubecrew dev serves no metrics port). */
    metrics?: ApiMetrics;
  } = {},
): Promise<RunningDev> {
  const llm = devLlm(config);
  // Every component in this one process shares one tracer (OTEL_* variables; nothing at all when none is set).
  const tracing = startTracing({ env: options.env ?? process.env, serviceName: "kubecrew" });
  // A CrewAI crew imported from the folder may come with notes: what kubecrew does differently (one line each).
  const imported = (note: string) => log.info(`CrewAI crew imported: ${note}`);
  const crews = (await loadCrews(config.crewsDir, imported)).map((c) =>
    c.spec.llm ? c : { ...c, spec: { ...c.spec, llm } },
  );
  const defaultCrew = config.defaultCrew ?? crews[0]?.metadata.name;

  const outboundPolicy = config.outbound;
  const outbound = createOutboundClient(outboundPolicy, options.resolver ? { resolver: options.resolver } : {});
  // The web console signs the local user in without a provider from this machine only (devSignIn).
  const signIn = devSignIn(config.host, config.console, config.auth.adminKey);
  const authConfig = { ...config.auth, ...(signIn.adminKey ? { adminKey: signIn.adminKey } : {}) };
  // Wrong admin keys, to the admin API or the console's sign-in, counted in this one process.
  const adminKeyGuesses = AdminKeyGuesses.memory(config.auth.adminKeyGuesses);
  const webConsole = createConsole(
    {
      ...config.console,
      oneProcess: true,
      ...(signIn.localUser ? { localUser: signIn.localUser } : {}),
      ...(signIn.adminKey ? { adminKey: signIn.adminKey } : {}),
      adminKeyGuesses,
      fetch: outbound.fetch,
    },
    log,
  );
  let auth: { tokens: TokenStore; routers: Router[]; paths: ExtraPaths; close?: () => void };
  let orgToken: string | undefined;
  let userToken: string | undefined;
  let redis: Redis | undefined;
  if (options.tokens) {
    auth = { tokens: options.tokens, routers: [], paths: {} }; // the caller's store (tests): crew routes only
  } else if (config.redisUrl) {
    redis = connectRedis(config.redisUrl, {
      log,
      commandTimeoutMs: config.auth.redisCommandTimeoutMs,
      autoPipelining: true,
    });
    auth = createRedisAuth({ redis, config: authConfig, log, sessions: webConsole.sessions, adminKeyGuesses });
    // Start answering either way: while Redis is away requests get 503, and the client reconnects by itself.
    await redisReady(redis, 5000).catch(() =>
      log.warn("Redis is not reachable yet; token checks answer 503 until it is"),
    );
    log.info(
      "Tokens live in Redis (KUBECREW_REDIS_URL); create one with: kubecrew token create --crew '*' --kind org " +
        "(or a service account: kubecrew client create --crew '*', then POST /oauth/token)",
    );
  } else {
    const memory = new MemoryTokenStore();
    orgToken = config.orgToken ?? newToken("org");
    userToken = config.userToken ?? newToken("user");
    memory.add(orgToken, { kind: "org", crews: "*", subject: "dev-org" });
    memory.add(userToken, { kind: "user", crews: "*", subject: "dev-user" });
    auth = createMemoryAuth({ store: memory, config: authConfig, log, sessions: webConsole.sessions, adminKeyGuesses });
  }

  // Connected apps: the integrations service in this process unless one elsewhere is configured; its connections in
  // Redis when KUBECREW_REDIS_URL is set (the tokens' client, when there is one), in memory otherwise.
  let integrationsRedis: Redis | undefined;
  let embedded: EmbeddedIntegrations | undefined;
  if (config.embeddedIntegrations) {
    const settings = config.embeddedIntegrations;
    integrationsRedis =
      redis ??
      (config.redisUrl
        ? connectRedis(config.redisUrl, {
            log,
            commandTimeoutMs: settings.config.redisCommandTimeoutMs,
            impact: "connection requests",
          })
        : undefined);
    embedded = new EmbeddedIntegrations(settings, {
      store: integrationsRedis ? new RedisStore(integrationsRedis) : new MemoryStore(),
      log: log.child({ component: "integrations" }),
      inRedis: integrationsRedis !== undefined,
    });
  }

  const workRoot = mkdtempSync(join(tmpdir(), "kubecrew-dev-"));
  const runnerEnv = {
    // The compile cache cuts each runner process's start-up by about half.
    NODE_COMPILE_CACHE: join(tmpdir(), "kubecrew-node-compile-cache"),
    ...withoutIntegrationsSecrets(options.env ?? process.env),
    LOG_LEVEL: "warn",
  };
  const { apps } = config;
  const appsSettings = apps ? () => apps : embedded ? () => embedded.apps() : undefined;
  const executionOptions = {
    workRoot,
    runnerCommand: [process.execPath, CLI_MAIN],
    runnerEnv,
    // Nothing Python happens until a crew with `runtime: crewai` runs a task.
    ...("KUBECREW_CREWAI_PYTHON" in runnerEnv ? {} : { crewaiEnv: crewaiPythonEnv({ log }) }),
    maxTasks: config.maxTasks,
    log,
    webhookFetch: outbound.fetch,
    ...(appsSettings
      ? {
          appCredentials: new LocalAppCredentials({
            settings: appsSettings,
            workRoot,
            fetch: outbound.fetch,
            log,
          }),
        }
      : {}),
  };
  const executions = new LocalExecutions({ crews, ...executionOptions });
  const flows = await embeddedFlows(config.crewsDir, llm, executionOptions, log, config.mockFeedbackSeconds * 1000);
  const integrations = config.integrations ?? embedded?.client();
  const api = await startApi({
    backend: executions,
    ...(flows ? { flows: flows.flows } : {}),
    ...(integrations ? { integrations: new IntegrationsClient(integrations, outbound.fetch) } : {}),
    console: webConsole,
    tokens: auth.tokens,
    extraRouters: [...(embedded ? [embedded.router] : []), ...auth.routers],
    extraPaths: auth.paths,
    log,
    bodyLimitBytes: config.bodyLimitBytes,
    prices: config.prices,
    outboundPolicy,
    // The task processes' policy: what their runners apply to MCP servers.
    toolOutboundPolicy: runnerPolicyFromEnv(runnerEnv),
    ...(redis ? { ready: () => redisAnswers(redis) } : {}),
    host: config.host,
    port: config.port,
    ...(defaultCrew ? { defaultCrew } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  // Synchronously after listening: no request reaches /oauthsvc before the service is there.
  const embeddedInfo = embedded?.listening(api.url);
  // Said once listening: a port that cannot be had is the one line said (test/integration/hardening/listen-errors).
  if (flows) log.info({ flows: flows.names }, "Flows served at /flows/{flow}/");
  return {
    url: api.url,
    crews,
    defaultCrew,
    llm,
    ...(orgToken ? { orgToken } : {}),
    ...(userToken ? { userToken } : {}),
    consoleSignIn: { how: signIn.how, ...(signIn.generated ? { generatedAdminKey: signIn.adminKey! } : {}) },
    // The flows' method runs too: a test sees as whom a method's child execution acts.
    executionIds: () => [...executions.ids(), ...(flows?.executions.ids() ?? [])],
    executionSpec: (id) => executions.specOf(id) ?? flows?.executions.specOf(id),
    ...(embedded && embeddedInfo ? { integrations: { ...embeddedInfo, store: embedded.store } } : {}),
    async stop() {
      await executions.close();
      await flows?.close();
      await api.stop();
      await embedded?.close();
      await outbound.close();
      auth.close?.();
      redis?.disconnect();
      if (integrationsRedis !== redis) integrationsRedis?.disconnect();
      rmSync(workRoot, { recursive: true, force: true });
      await tracing.stop();
    },
  };
}
