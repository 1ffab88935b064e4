import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { defaultLocalThreads, loadedModel, LocalModelError, type LocalModelSettings } from "./local-llama.ts";

// llama.cpp itself is stubbed here (the model project runs the real engine on a real model): these tests count how
// often a runner process would load a GGUF file, which takes seconds and a model's size in memory each time.
const engine = vi.hoisted(() => {
  const createContext = vi.fn(async () => ({ getSequence: () => ({}) }));
  const loadModel = vi.fn(async (_options: { modelPath: string }) => ({ createContext }));
  return { loadModel, createContext, getLlama: vi.fn(async () => ({ loadModel })) };
});
vi.mock("node-llama-cpp", () => ({
  getLlama: engine.getLlama,
  LlamaChat: class {},
  LlamaLogLevel: { error: "error" },
}));

const folder = mkdtempSync(join(tmpdir(), "kubecrew-local-llama-"));
let files = 0;
/** Settings naming a GGUF file of their own (the loaded models are kept for the process: one file per test). */
function settings(exists = true): LocalModelSettings {
  const path = join(folder, `model-${++files}.gguf`);
  if (exists) writeFileSync(path, "GGUF");
  return { path, contextSize: 2048, threads: 1 };
}
const loadsOf = (path: string) => engine.loadModel.mock.calls.filter(([options]) => options.modelPath === path).length;

beforeEach(() => engine.loadModel.mockClear());

describe("loadedModel", () => {
  it("loads a model once per process: the calls of every turn with the same settings share it", async () => {
    const s = settings();
    const [first, second] = await Promise.all([loadedModel(s), loadedModel(s)]);
    const third = await loadedModel({ ...s });
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(loadsOf(s.path)).toBe(1);
    // Another context size is another context: loaded on its own.
    const larger = await loadedModel({ ...s, contextSize: 4096 });
    expect(larger).not.toBe(first);
    expect(loadsOf(s.path)).toBe(2);
    expect(engine.getLlama).toHaveBeenCalledTimes(1);
  });

  it("loads again on the next call after a load failed", async () => {
    const s = settings();
    engine.loadModel.mockRejectedValueOnce(new Error("not a GGUF file"));
    await expect(loadedModel(s)).rejects.toThrow("not a GGUF file");
    const model = await loadedModel(s);
    expect(await loadedModel(s)).toBe(model);
    expect(loadsOf(s.path)).toBe(2);
  });

  it("says how to get a missing file, and loads it once it is there", async () => {
    const s = settings(false);
    const missing = loadedModel(s);
    await expect(missing).rejects.toThrow(LocalModelError);
    await expect(missing).rejects.toThrow(/does not exist: pull it with `kubecrew model pull`/);
    writeFileSync(s.path, "GGUF");
    await expect(loadedModel(s)).resolves.toMatchObject({ exclusive: expect.any(Function) });
    expect(loadsOf(s.path)).toBe(1);
  });
});

describe("defaultLocalThreads", () => {
  it("is half the cores, at least one: a model never asks for every core of a machine doing other work", () => {
    expect([1, 2, 3, 4, 8, 64].map((cores) => defaultLocalThreads(cores))).toEqual([1, 1, 1, 2, 4, 32]);
  });
});
