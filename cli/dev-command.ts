import type { Command } from "commander";
import { configOrExit, parseConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { exitIfCannotListen } from "../platform/http/listen-error.ts";
import { devConfigSchema } from "../dev/config.ts";
import { CrewManifestError } from "../dev/crew-catalog.ts";
import { startDev, type RunningDev } from "../dev/start.ts";
import { pulledModelLlm } from "./pulled-model.ts";

export function registerDevCommand(program: Command): void {
  program
    .command("dev")
    .description(
      "Run everything in one process on this machine: the crew API, executions in memory, tasks as local processes",
    )
    .action(async () => {
      const configured = configOrExit("dev", () => parseConfig(devConfigSchema, process.env));
      // `npm start` with no model configured runs the model `kubecrew model pull` left in the cache, if there is one.
      const pulled = configured.llm.provider ? undefined : pulledModelLlm(process.env);
      const config = pulled ? { ...configured, llm: pulled.llm } : configured;
      const log = createLogger({ level: config.logLevel, name: "dev" });
      const listening = { host: "HOST", port: "PORT" };
      const dev = await exitIfCannotListen("dev", listening, () => startDev(config, log)).catch((err: unknown) => {
        if (!(err instanceof CrewManifestError)) throw err;
        // As `kubectl apply` would refuse them: one line per problem, nothing started.
        process.stderr.write(err.problems.map((problem) => `kubecrew dev: ${problem}\n`).join(""));
        process.exit(1);
      });
      const base = dev.url;
      const lines = [
        ``,
        `kubecrew dev — the crew API is listening on ${base}`,
        `  crews:        ${dev.crews.map((c) => c.metadata.name).join(", ") || "(none found)"}`,
        `  default crew: ${dev.defaultCrew ?? "(none)"} at ${base}/inputs, ${base}/kickoff, ${base}/status/{kickoff_id}`,
        `                every crew at ${base}/crews/{crew}/…`,
        ...consoleLines(base, config.host, dev.consoleSignIn),
        ...appsLines(dev.integrations),
        ...(dev.orgToken
          ? [`  org token:    ${dev.orgToken}`, `  user token:   ${dev.userToken}`]
          : [
              `  tokens:       in Redis (KUBECREW_REDIS_URL); create one with`,
              `                npm run kubecrew -- token create --crew ${dev.defaultCrew ?? "<crew>"} --kind org`,
            ]),
        dev.llm.provider === "mock"
          ? `  LLM:          mock provider — deterministic test answers, no model is called.\n` +
            `                For a real model on this machine: npm run kubecrew -- model pull (SmolLM2-135M, 98 MB),\n` +
            `                then npm start again. Or set KUBECREW_LLM_PROVIDER (openai, anthropic, openai-compatible,\n` +
            `                local), KUBECREW_LLM_MODEL, KUBECREW_LLM_BASE_URL and the provider's API key (OPENAI_API_KEY, …).`
          : pulled
            ? `  LLM:          local ${dev.llm.model}, the model pulled to ${pulled.path},\n` +
              `                run on this machine's CPU by llama.cpp (KUBECREW_LLM_PROVIDER=mock for the mock provider)`
            : `  LLM:          ${dev.llm.provider} ${dev.llm.model}${dev.llm.baseURL ? ` at ${dev.llm.baseURL}` : ""}`,
        ``,
        `  curl -H "Authorization: Bearer ${dev.orgToken ?? "$TOKEN"}" ${base}/inputs`,
        ``,
      ];
      process.stdout.write(lines.join("\n") + "\n");
      const shutdown = async (signal: string) => {
        log.info({ signal }, "Stopping");
        await dev.stop();
        process.exit(0);
      };
      process.once("SIGINT", () => void shutdown("SIGINT"));
      process.once("SIGTERM", () => void shutdown("SIGTERM"));
    });
}

/** Connected apps: the providers a user can connect in the console's Apps tab, and the redirect URI they need. */
function appsLines(integrations: RunningDev["integrations"]): string[] {
  if (!integrations) return [];
  const providers = integrations.providers.length
    ? integrations.providers.join(", ")
    : "none yet (set KUBECREW_GOOGLE_CLIENT_ID and KUBECREW_GOOGLE_CLIENT_SECRET, or another provider's pair)";
  return [
    `  apps:         connect them in the console's Apps tab; providers: ${providers}`,
    `                redirect URI to register at a provider: ${integrations.redirectUri}`,
  ];
}

/** How to reach the console, and how to sign in to it from where `kubecrew dev` listens. */
function consoleLines(base: string, host: string, signIn: RunningDev["consoleSignIn"]): string[] {
  const at = `  console:      ${base}/console/`;
  if (signIn.how === "oidc") return [`${at}  (sign in with your OpenID provider)`];
  if (signIn.how === "local") return [`${at}  (signed in as the local user, from this machine only)`];
  const why = `HOST=${host} is reachable from other machines: sign in with the admin key`;
  if (!signIn.generatedAdminKey) return [`${at}`, `                ${why} (KUBECREW_ADMIN_KEY)`];
  return [
    `${at}`,
    `                ${why}:`,
    `  admin key:    ${signIn.generatedAdminKey}`,
    `                (new each start; set KUBECREW_ADMIN_KEY, 32 characters or more, to keep one)`,
  ];
}
