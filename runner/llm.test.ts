import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { LlmConfig } from "../core/crew.ts";
import { apiKeyFor, apiKeyVariables, languageModelFor, LlmConfigError } from "./llm.ts";
import { createOutboundClient } from "../platform/outbound/outbound-fetch.ts";
import { localPolicy } from "../core/outbound/policy.ts";

const { fetch } = createOutboundClient(localPolicy);

const openai: LlmConfig = { provider: "openai", model: "gpt-4o-mini" };

describe("apiKeyFor", () => {
  it("takes KUBECREW_LLM_API_KEY (the pod's Secret) first, then apiKeyEnv, then the provider's variable", () => {
    const llm: LlmConfig = { ...openai, apiKeyEnv: "MY_KEY" };
    expect(apiKeyVariables(llm)).toEqual(["KUBECREW_LLM_API_KEY", "MY_KEY", "OPENAI_API_KEY"]);
    expect(apiKeyFor(llm, { KUBECREW_LLM_API_KEY: "k1", MY_KEY: "k2", OPENAI_API_KEY: "k3" })).toBe("k1");
    expect(apiKeyFor(llm, { MY_KEY: "k2", OPENAI_API_KEY: "k3" })).toBe("k2");
    expect(apiKeyFor(llm, { OPENAI_API_KEY: "k3" })).toBe("k3");
    expect(apiKeyFor(llm, { MY_KEY: " ", OPENAI_API_KEY: "k3" })).toBe("k3");
  });

  it("takes an llm's own Secret first (a coworker's key in the manager's pod), then the task agent's", () => {
    const llm: LlmConfig = { ...openai, apiKeySecretRef: { name: "writer-key", key: "key" } };
    expect(apiKeyVariables(llm)).toEqual(["KUBECREW_SECRET_WRITER_KEY_KEY", "KUBECREW_LLM_API_KEY", "OPENAI_API_KEY"]);
    expect(apiKeyFor(llm, { KUBECREW_SECRET_WRITER_KEY_KEY: "writer", KUBECREW_LLM_API_KEY: "manager" })).toBe(
      "writer",
    );
  });

  it("uses each provider's usual variable", () => {
    expect(apiKeyFor({ provider: "anthropic", model: "m" }, { ANTHROPIC_API_KEY: "a", OPENAI_API_KEY: "o" })).toBe("a");
    expect(
      apiKeyFor(
        { provider: "openai-compatible", model: "m", baseURL: "http://x" },
        { KUBECREW_OPENAI_COMPATIBLE_API_KEY: "l" },
      ),
    ).toBe("l");
    expect(apiKeyFor({ provider: "mock", model: "m" }, { KUBECREW_LLM_API_KEY: "k" })).toBeUndefined();
  });
});

describe("languageModelFor", () => {
  it("builds each provider's chat model", () => {
    expect(languageModelFor(openai, { OPENAI_API_KEY: "k" }, fetch)).toMatchObject({
      modelId: "gpt-4o-mini",
      provider: "openai.chat",
    });
    expect(
      languageModelFor({ provider: "anthropic", model: "claude" }, { ANTHROPIC_API_KEY: "k" }, fetch),
    ).toMatchObject({
      modelId: "claude",
    });
    expect(
      languageModelFor(
        { provider: "openai-compatible", model: "llama3", baseURL: "http://127.0.0.1:11434/v1" },
        {},
        fetch,
      ),
    ).toMatchObject({ modelId: "llama3" });
    expect(languageModelFor({ provider: "mock", model: "fail" }, {}, fetch)).toMatchObject({
      provider: "mock",
      modelId: "fail",
    });
  });

  it("names the variables to set when a key is missing", () => {
    expect(() => languageModelFor(openai, {}, fetch)).toThrow(
      new LlmConfigError("No API key for the openai provider: set one of KUBECREW_LLM_API_KEY, OPENAI_API_KEY"),
    );
  });

  it("needs a baseURL for openai-compatible", () => {
    expect(() => languageModelFor({ provider: "openai-compatible", model: "m" }, {}, fetch)).toThrow(/needs a baseURL/);
  });
});

describe("languageModelFor, the local provider", () => {
  const local: LlmConfig = { provider: "local", model: "smollm2-135m" };
  const FILE = "SmolLM2-135M-Instruct.Q4_1.gguf";

  it("finds a model in the model folder (KUBECREW_MODEL_DIR) or at its path, and names the path it looked at", () => {
    const dir = mkdtempSync(join(tmpdir(), "kubecrew-models-"));
    try {
      writeFileSync(join(dir, FILE), "");
      const env = { KUBECREW_MODEL_DIR: dir };
      expect(languageModelFor(local, env, fetch)).toMatchObject({ provider: "local", modelId: "smollm2-135m" });
      const byPath = { ...local, model: join(dir, FILE) };
      expect(languageModelFor(byPath, {}, fetch)).toMatchObject({ modelId: join(dir, FILE) });
      expect(() => languageModelFor({ ...local, model: "other.gguf" }, env, fetch)).toThrow(
        new LlmConfigError(
          `The local model other.gguf is not at ${join(dir, "other.gguf")}: pull it with \`kubecrew model pull\`, or mount its volume there`,
        ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads /models as a pod mounts it, whatever else the environment holds", () => {
    const env = { KUBECREW_MODEL_DIR: "/models", KUBECREW_CONTAINER_ROOT: tmpdir() };
    expect(() => languageModelFor(local, env, fetch)).toThrow(`is not at /models/${FILE}`);
  });
});
