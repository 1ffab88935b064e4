import { statSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { catalogModel, DEFAULT_LOCAL_MODEL } from "../../../core/local-models.ts";
import { testModelDir } from "../../support/local-model.ts";
import pullTestModel from "../../support/model-global-setup.ts";
import { cli } from "./support.ts";

// `kubecrew model pull` as a user runs it, on the tests' model folder: the model npm test pulled before vitest (a
// warm cache, so nothing is fetched here).
const model = catalogModel(DEFAULT_LOCAL_MODEL)!;
const dir = testModelDir(process.env);
const file = join(dir, model.file);

beforeAll(() => pullTestModel(), 300_000);

describe("kubecrew model pull", () => {
  it("finds the default model already pulled: its path and SHA-256, the file untouched, exit 0", async () => {
    const before = statSync(file).mtimeMs;
    const r = await cli(["model", "pull"], { KUBECREW_MODEL_DIR: dir });
    expect(r, r.stderr).toMatchObject({ code: 0, stderr: "" });
    const size = `${(statSync(file).size / 1e6).toFixed(1)} MB`;
    expect(r.stdout).toContain(`already pulled: ${file} (${size}, sha256 ${model.sha256})`);
    expect(r.stdout).toContain(`use it in a crew as llm: {provider: local, model: ${DEFAULT_LOCAL_MODEL}}`);
    expect(statSync(file).mtimeMs).toBe(before);
  });

  it("refuses a name it does not know: exit 1 and what it takes", async () => {
    const r = await cli(["model", "pull", "nope"], { KUBECREW_MODEL_DIR: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      "kubecrew model pull: Unknown model nope: give a name kubecrew knows or hf:<owner>/<repo>/<file>.gguf\n",
    );
  });
});
