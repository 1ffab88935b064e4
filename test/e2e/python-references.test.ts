import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { kubectlStatus } from "./support/kubectl.ts";
import { crewNamespace, nodeBinary, releaseCrewNamespace, repo } from "./support/fixture.ts";

/**
 * A task's Python references (issue 30 item 4) against the installed Crew CRD: examples/crewai-project/crew.yaml is
 * accepted, a reference that is not `module.attribute` is refused naming the field and the reference, by the apiserver
 * and by `kubecrew dev` alike.
 */
const kubeconfig = inject("kubeconfig");
let namespace: string;
let dir: string;
let example: string;
beforeAll(async () => {
  namespace = await crewNamespace(kubeconfig, "pyrefs");
  dir = await mkdtemp(join(tmpdir(), "kubecrew-pyrefs-e2e-"));
  example = await readFile(join(repo, "examples/crewai-project/crew.yaml"), "utf8");
});
afterAll(async () => {
  if (namespace) await releaseCrewNamespace(kubeconfig, namespace);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const apply = (manifest: string) =>
  kubectlStatus(kubeconfig, ["apply", "--dry-run=server", "--validate=strict", "-n", namespace, "-f", "-"], manifest);

it("accepts the example's references and refuses one that is not module.attribute, naming it", async () => {
  const accepted = await apply(example);
  expect(accepted.stderr).toBe("");
  expect(accepted.code).toBe(0);

  const bad = example.replace("- market_digest.tools.custom_tool.MyCustomTool", "- market_digest:MyCustomTool");
  expect(bad).not.toBe(example);
  const refused = await apply(bad);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain('spec.tasks[0].python.tools[0]: Invalid value: "market_digest:MyCustomTool"');

  await writeFile(join(dir, "crew.yaml"), bad);
  const dev = await promisify(execFile)(nodeBinary, [join(repo, "cli/main.ts"), "dev"], {
    env: { ...process.env, KUBECREW_CREWS_DIR: dir, PORT: "0", LOG_LEVEL: "warn" },
    timeout: 20_000,
  }).then(
    () => ({ code: 0, stderr: "" }),
    (err: { code: number | null; stderr: string }) => err,
  );
  expect(dev.code).toBe(1);
  expect(dev.stderr).toContain("python.tools");
  expect(dev.stderr).toContain("must be a Python reference module.attribute");
});
