import { describe, expect, it } from "vitest";
import { localModelPath, modelCacheDir, parseHuggingFaceReference } from "./local-models.ts";

describe("local model names", () => {
  it("finds the cache folder from KUBECREW_MODEL_DIR, XDG_CACHE_HOME or HOME", () => {
    expect(modelCacheDir({ KUBECREW_MODEL_DIR: "/models" })).toBe("/models");
    expect(modelCacheDir({ XDG_CACHE_HOME: "/c", HOME: "/h" })).toBe("/c/kubecrew/models");
    expect(modelCacheDir({ HOME: "/h" })).toBe("/h/.cache/kubecrew/models");
  });

  it("names a file for a catalogue name, a Hugging Face reference and a path", () => {
    const env = { KUBECREW_MODEL_DIR: "/models" };
    expect(localModelPath("smollm2-135m", env)).toBe("/models/SmolLM2-135M-Instruct.Q4_1.gguf");
    expect(localModelPath("hf:o/r@v1/q/m.gguf", env)).toBe("/models/hf/o/r/v1/q/m.gguf");
    expect(localModelPath("mine/m.gguf", env)).toBe("/models/mine/m.gguf");
    expect(localModelPath("/data/m.gguf", env)).toBe("/data/m.gguf");
    expect(parseHuggingFaceReference("hf:o/r/m.gguf")).toEqual({ repo: "o/r", revision: "main", path: "m.gguf" });
    expect(parseHuggingFaceReference("hf:o/m.gguf")).toBeUndefined();
  });
});
