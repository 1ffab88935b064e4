import { z } from "zod";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { existsSync } from "node:fs";
import type { LlmConfig, LlmProvider } from "../core/crew.ts";
import { localModelPath } from "../core/local-models.ts";
import { secretEnvName } from "../core/tools.ts";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import { defaultLocalThreads } from "./local-llama.ts";
import { createLocalLanguageModel } from "./local-model.ts";
import { createMockLanguageModel, type LanguageModelV3 } from "./mock-model.ts";
import { KubecrewError } from "../core/errors.ts";

/** The process environment as the runner's config module hands it over (API keys are looked up by name). */
export type Env = Readonly<Record<string, string | undefined>>;

/** Where the controller puts the key of the agent's `apiKeySecretRef` (a secretKeyRef env var of the task pod). */
export const KUBECREW_LLM_API_KEY = "KUBECREW_LLM_API_KEY";

/** The variable each provider's key is read from when the agent names none. */
export const DEFAULT_API_KEY_ENV: Record<LlmProvider, string | undefined> = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  "openai-compatible": "KUBECREW_OPENAI_COMPATIBLE_API_KEY",
  local: undefined,
  mock: undefined,
};

/** The API key variables the runner looks in: for docs/configuration.md. */
export const llmKeyVariables = z.object({
  [KUBECREW_LLM_API_KEY]: z
    .string()
    .optional()
    .describe(
      "The LLM API key of a task pod, set by the controller from the Secret the crew's llm names; looked in first.",
    ),
  ...Object.fromEntries(
    Object.entries(DEFAULT_API_KEY_ENV)
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([provider, name]) => [
        name,
        z
          .string()
          .optional()
          .describe(
            `The API key of the ${provider} provider, when neither KUBECREW_LLM_API_KEY nor the agent's apiKeyEnv is set.`,
          ),
      ]),
  ),
});

/** A configuration problem (missing key or base URL): retrying cannot help. */
export class LlmConfigError extends KubecrewError {
  readonly code = "llm_not_configured";
  override name = "LlmConfigError";
}

/**
 * The variables searched for the API key, in order: the one the controller sets from the llm's own Secret
 * (`secretEnvName`: a coworker's key in the manager's pod), KUBECREW_LLM_API_KEY (the task agent's Secret), the
 * agent's `apiKeyEnv`, then the provider's usual variable. Empty values count as unset.
 */
export function apiKeyVariables(llm: LlmConfig): string[] {
  const ownSecret = llm.apiKeySecretRef ? secretEnvName(llm.apiKeySecretRef) : undefined;
  const names = [ownSecret, KUBECREW_LLM_API_KEY, llm.apiKeyEnv, DEFAULT_API_KEY_ENV[llm.provider]];
  return [...new Set(names.filter((n): n is string => !!n))];
}

export function apiKeyFor(llm: LlmConfig, env: Env): string | undefined {
  if (llm.provider === "mock" || llm.provider === "local") return undefined;
  for (const name of apiKeyVariables(llm)) {
    const value = env[name]?.trim();
    if (value) return value;
  }
  return undefined;
}

function requiredKey(llm: LlmConfig, env: Env): string {
  const key = apiKeyFor(llm, env);
  if (!key) {
    throw new LlmConfigError(
      `No API key for the ${llm.provider} provider: set one of ${apiKeyVariables(llm).join(", ")}`,
    );
  }
  return key;
}

/**
 * The AI SDK model an agent's LlmConfig names, calling its provider through `fetch` (the outbound client's, so a
 * base URL the outbound URL policy refuses is never reached). Throws LlmConfigError when the configuration cannot work.
 */
export function languageModelFor(llm: LlmConfig, env: Env, fetch: Fetch): LanguageModelV3 {
  switch (llm.provider) {
    case "openai":
      // Chat Completions rather than the Responses API: every OpenAI-style base URL (proxies, Azure-style gateways) has it.
      return createOpenAI({ apiKey: requiredKey(llm, env), baseURL: llm.baseURL, fetch }).chat(llm.model);
    case "anthropic":
      return createAnthropic({ apiKey: requiredKey(llm, env), baseURL: llm.baseURL, fetch })(llm.model);
    case "openai-compatible":
      if (!llm.baseURL) throw new LlmConfigError("The openai-compatible provider needs a baseURL");
      // Local servers (Ollama, vLLM) often need no key: without one, no Authorization header is sent.
      return createOpenAICompatible({
        name: "openai-compatible",
        baseURL: llm.baseURL,
        apiKey: apiKeyFor(llm, env),
        includeUsage: true,
        fetch,
      }).chatModel(llm.model);
    case "local":
      return localLanguageModel(llm, env);
    case "mock":
      return createMockLanguageModel(llm.model);
  }
}

/** The local provider's context window when the agent's llm sets none. */
export const DEFAULT_LOCAL_CONTEXT_SIZE = 4096;

/** A GGUF model from the model folder (KUBECREW_MODEL_DIR) or a path: never downloaded here. */
function localLanguageModel(llm: LlmConfig, env: Env): LanguageModelV3 {
  const path = localModelPath(llm.model, env);
  if (!existsSync(path)) {
    throw new LlmConfigError(
      `The local model ${llm.model} is not at ${path}: pull it with \`kubecrew model pull\`, or mount its volume there`,
    );
  }
  return createLocalLanguageModel({
    modelId: llm.model,
    path,
    contextSize: llm.contextSize ?? DEFAULT_LOCAL_CONTEXT_SIZE,
    threads: llm.threads ?? defaultLocalThreads(),
  });
}

/** How the model is named in outcomes and logs: `provider/model`. */
export function modelLabel(llm: LlmConfig): string {
  return `${llm.provider}/${llm.model}`;
}
