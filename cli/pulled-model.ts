import { existsSync } from "node:fs";
import type { LlmConfig } from "../core/crew.ts";
import { DEFAULT_LOCAL_MODEL, localModelPath } from "../core/local-models.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** The model `kubecrew model pull` fetches by default, when it is in the model folder: `npm start` runs it. */
export function pulledModelLlm(env: Env): { llm: LlmConfig & { provider: "local" }; path: string } | undefined {
  const path = localModelPath(DEFAULT_LOCAL_MODEL, env);
  return existsSync(path) ? { llm: { provider: "local", model: DEFAULT_LOCAL_MODEL }, path } : undefined;
}
