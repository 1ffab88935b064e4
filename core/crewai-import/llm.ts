import type { LlmConfig } from "../crew.ts";
import { CREWAI_RUNTIME } from "./field-rules.ts";
import type { Findings } from "./findings.ts";

/** Where CrewAI reaches Ollama when the llm names no base URL; kubecrew calls its OpenAI-compatible API under /v1. */
const OLLAMA_DEFAULT_BASE = "http://localhost:11434";

const OTHER_PROVIDERS =
  "kubecrew's runtime calls OpenAI, Anthropic and OpenAI-compatible APIs: put an OpenAI-compatible proxy (such as " +
  `LiteLLM's) in front of this model and write llm as {"model": ..., "base_url": ...}, ${CREWAI_RUNTIME}`;

/**
 * An agent's model as kubecrew names it, from CrewAI's `llm`: a "provider/model" string (LiteLLM's convention, as
 * CrewAI writes it) or an object ({model, provider, base_url, temperature, max_tokens}). Undefined, with a problem,
 * when kubecrew cannot call it.
 */
export function llmFromCrewAI(value: unknown, at: string, findings: Findings): LlmConfig | undefined {
  if (typeof value === "string") return fromModel(value, undefined, undefined, at, findings);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    findings.problem(at, 'must be a model ("provider/model") or an object with a model');
    return undefined;
  }
  const { model, provider, base_url, api_base, api_key, temperature, max_tokens, ...rest } = value as Record<
    string,
    unknown
  >;
  let ok = true;
  if (typeof model !== "string" || !model) {
    findings.problem(`${at}.model`, "is required: the model's name");
    return undefined;
  }
  if (api_key !== undefined && api_key !== null) {
    findings.problem(
      `${at}.api_key`,
      "a key written into the definition: put it in a Secret (the agent's llm.apiKeySecretRef) or the provider's " +
        "variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, KUBECREW_OPENAI_COMPATIBLE_API_KEY), and remove it here",
    );
    ok = false;
  }
  for (const key of Object.keys(rest)) {
    if (rest[key] === null || rest[key] === undefined) continue;
    findings.problem(`${at}.${key}`, `kubecrew's llm has no ${key}: remove it, ${CREWAI_RUNTIME}`);
    ok = false;
  }
  const base = base_url ?? api_base;
  if (base !== undefined && base !== null && (typeof base !== "string" || !/^https?:\/\/\S+$/.test(base))) {
    findings.problem(`${at}.${base_url !== undefined ? "base_url" : "api_base"}`, "must be an http(s) URL");
    ok = false;
  }
  if (provider !== undefined && provider !== null && typeof provider !== "string") {
    findings.problem(`${at}.provider`, "must be a provider's name");
    ok = false;
  }
  const llm = fromModel(model, provider as string | undefined, base as string | undefined, at, findings);
  if (!llm) return undefined;
  if (temperature !== undefined && temperature !== null) {
    if (typeof temperature !== "number" || temperature < 0 || temperature > 2) {
      findings.problem(`${at}.temperature`, "must be a number from 0 to 2");
      ok = false;
    } else llm.temperature = temperature;
  }
  if (max_tokens !== undefined && max_tokens !== null) {
    const tokens = positiveInteger(max_tokens, `${at}.max_tokens`, findings);
    if (tokens === undefined) ok = false;
    else llm.maxOutputTokens = tokens;
  }
  return ok ? llm : undefined;
}

function fromModel(
  model: string,
  provider: string | undefined,
  baseURL: string | undefined,
  at: string,
  findings: Findings,
): LlmConfig | undefined {
  const slash = model.indexOf("/");
  const named = provider ?? (slash > 0 ? model.slice(0, slash) : inferredProvider(model));
  const name = slash > 0 && (!provider || model.slice(0, slash) === provider) ? model.slice(slash + 1) : model;
  if (!named) {
    findings.problem(at, `"${model}" names no provider: write it as provider/model (e.g. openai/${model})`);
    return undefined;
  }
  if (!name) {
    findings.problem(at, `"${model}" names no model`);
    return undefined;
  }
  const base = baseURL?.replace(/\/+$/, "");
  switch (named.toLowerCase()) {
    case "openai":
      return { provider: "openai", model: name, ...(base ? { baseURL: base } : {}) };
    case "anthropic":
    case "claude":
      return { provider: "anthropic", model: name, ...(base ? { baseURL: base } : {}) };
    case "ollama":
    case "ollama_chat": {
      const root = base ?? OLLAMA_DEFAULT_BASE;
      return { provider: "openai-compatible", model: name, baseURL: root.endsWith("/v1") ? root : `${root}/v1` };
    }
    case "hosted_vllm":
    case "openai_compatible":
    case "openai-compatible":
      if (!base) {
        findings.problem(at, `the ${named} provider needs the server's base_url: write llm as {"model", "base_url"}`);
        return undefined;
      }
      return { provider: "openai-compatible", model: name, baseURL: base };
    default:
      findings.problem(at, `"${model}": ${OTHER_PROVIDERS}`);
      return undefined;
  }
}

/** The provider of a model named without one, for the families CrewAI recognises by their names. */
function inferredProvider(model: string): string | undefined {
  if (/^(gpt-|o\d|chatgpt-)/.test(model)) return "openai";
  if (/^claude-/.test(model)) return "anthropic";
  return undefined;
}

export function positiveInteger(value: unknown, at: string, findings: Findings): number | undefined {
  if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  findings.problem(at, "must be a positive whole number");
  return undefined;
}
