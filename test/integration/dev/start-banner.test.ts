import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { catalogModel, DEFAULT_LOCAL_MODEL } from "../../../core/local-models.ts";
import { testModelDir } from "../../support/local-model.ts";
import pullTestModel from "../../support/model-global-setup.ts";
import { outputMatching, startCli } from "../cli/support.ts";

// `npm start` (kubecrew dev) says in its banner which model answers: the model `kubecrew model pull` left in the model
// folder when there is one, the mock provider otherwise, with how to pull one. The model folder with the model in it is
// the tests' own (npm test pulled it before vitest: a warm cache).
const modelFile = () => join(testModelDir(process.env), catalogModel(DEFAULT_LOCAL_MODEL)!.file);

beforeAll(() => pullTestModel(), 300_000);

/** kubecrew dev's banner, read until its last line, the server then stopped as a user stops it. */
async function banner(env: Record<string, string>): Promise<string> {
  const dev = startCli(["dev"], { PORT: "0", LOG_LEVEL: "warn", ...env });
  try {
    // Loading kubecrew dev takes seconds, more beside the other test workers on 2 cores.
    await outputMatching(dev.stdout, /curl -H .*\/inputs\n/, 80_000);
  } finally {
    dev.child.kill("SIGTERM");
  }
  const { code, stderr } = await dev.exited;
  expect(code, stderr).toBe(0);
  return dev.stdout();
}

const mockLines = [
  "  LLM:          mock provider — deterministic test answers, no model is called.",
  "                For a real model on this machine: npm run kubecrew -- model pull (SmolLM2-135M, 98 MB),",
  "                then npm start again.",
];

describe("npm start's banner names the model that answers", { timeout: 90_000 }, () => {
  it("the mock provider, and how to pull a model, when the model folder holds none", async () => {
    const out = await banner({ KUBECREW_MODEL_DIR: mkdtempSync(join(tmpdir(), "kubecrew-no-models-")) });
    for (const line of mockLines) expect(out).toContain(line);
    expect(out).not.toContain("local smollm2");
  });

  it("the pulled model, where it is and what runs it, when the model folder holds it", async () => {
    const out = await banner({ KUBECREW_MODEL_DIR: testModelDir(process.env) });
    expect(out).toContain(
      `  LLM:          local ${DEFAULT_LOCAL_MODEL}, the model pulled to ${modelFile()},\n` +
        "                run on this machine's CPU by llama.cpp (KUBECREW_LLM_PROVIDER=mock for the mock provider)\n",
    );
    expect(out).not.toContain("mock provider —");
  });

  it("the mock provider when KUBECREW_LLM_PROVIDER says so, although a model was pulled", async () => {
    const out = await banner({ KUBECREW_MODEL_DIR: testModelDir(process.env), KUBECREW_LLM_PROVIDER: "mock" });
    for (const line of mockLines) expect(out).toContain(line);
    expect(out).not.toContain("local smollm2");
  });
});
