import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { kubectlStatus } from "./support/kubectl.ts";
import { crewNamespace, crewYaml, nodeBinary, releaseCrewNamespace, repo } from "./support/fixture.ts";

/**
 * `kubecrew dev` refuses the fields `kubectl apply --validate=strict` refuses: the same manifest goes to the real
 * apiserver (a server-side dry run against the installed Crew CRD) and to `kubecrew dev`, and both name the same
 * unknown fields.
 */
const kubeconfig = inject("kubeconfig");
let namespace: string;
let dir: string;
beforeAll(async () => {
  namespace = await crewNamespace(kubeconfig, "strict");
  dir = await mkdtemp(join(tmpdir(), "kubecrew-strict-e2e-"));
});
afterAll(async () => {
  if (namespace) await releaseCrewNamespace(kubeconfig, namespace);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const unknownIn = (text: string) => [...text.matchAll(/unknown field "([^"]+)"/g)].map((m) => m[1]!).sort();

it("names the same unknown fields as the apiserver's strict field validation", async () => {
  const manifest = crewYaml("strict-notes", "mock", { tasks: 2 })
    .replace("name: strict-notes", "name: strict-notes\n  lables: { team: a }")
    .replace('role: "{topic} Writer"', 'rol: "x", role: "{topic} Writer"')
    .replace("llm: { provider: mock", "llm: { temprature: 0.2, provider: mock")
    .replace('expectedOutput: "Text 2" }', 'expectedOutput: "Text 2", async_execution: true }')
    .replace("    retries: 0", "    retries: 0\n    parallelism: 3")
    .replace("  inputs: [{ name: topic }]", "  inputs: [{ name: topic, requird: true }]\n  planning: true");

  const server = await kubectlStatus(
    kubeconfig,
    ["apply", "--dry-run=server", "--validate=strict", "-n", namespace, "-f", "-"],
    manifest,
  );
  expect(server.code).not.toBe(0);
  const refusedByServer = unknownIn(server.stderr);
  expect(refusedByServer.length).toBe(7);

  await writeFile(join(dir, "crew.yaml"), manifest);
  const dev = await promisify(execFile)(nodeBinary, [join(repo, "cli/main.ts"), "dev"], {
    env: { ...process.env, KUBECREW_CREWS_DIR: dir, PORT: "0", LOG_LEVEL: "warn" },
    timeout: 20_000,
  }).then(
    () => ({ code: 0, stderr: "" }),
    (err: { code: number | null; stderr: string }) => err,
  );
  expect(dev.code).toBe(1);
  expect(unknownIn(dev.stderr)).toEqual(refusedByServer);

  // Without the unknown fields both accept it.
  const clean = crewYaml("strict-notes", "mock", { tasks: 2 });
  const accepted = await kubectlStatus(
    kubeconfig,
    ["apply", "--dry-run=server", "--validate=strict", "-n", namespace, "-f", "-"],
    clean,
  );
  expect(accepted.stderr).toBe("");
  expect(accepted.code).toBe(0);
});

it("refuses an unknown connected app on apply, naming the supported ones, as kubecrew dev does", async () => {
  const withApps = (apps: string) =>
    crewYaml("strict-apps", "mock", { tasks: 1 }).replace(
      'backstory: "Writes well." }',
      `backstory: "Writes well.", apps: [${apps}] }`,
    );
  const apply = (manifest: string) =>
    kubectlStatus(kubeconfig, ["apply", "--dry-run=server", "--validate=strict", "-n", namespace, "-f", "-"], manifest);

  const refused = await apply(withApps("gmail/send_email, gmial"));
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain('spec.agents[0].apps[1]: Unsupported value: "gmial": supported values: "gmail"');
  expect(refused.stderr).toContain('"gmail/send_email"');
  expect(refused.stderr).toContain('"notion/create_page"');

  await writeFile(join(dir, "crew.yaml"), withApps("gmail/send_email, gmial"));
  const dev = await promisify(execFile)(nodeBinary, [join(repo, "cli/main.ts"), "dev"], {
    env: { ...process.env, KUBECREW_CREWS_DIR: dir, PORT: "0", LOG_LEVEL: "warn" },
    timeout: 20_000,
  }).then(
    () => ({ code: 0, stderr: "" }),
    (err: { code: number | null; stderr: string }) => err,
  );
  expect(dev.code).toBe(1);
  expect(dev.stderr).toContain('spec.agents[0].apps[1]: unknown app or action "gmial": an app (gmail, google_calendar');

  const accepted = await apply(withApps("gmail, google_calendar/create_event, notion/search"));
  expect(accepted.stderr).toBe("");
  expect(accepted.code).toBe(0);
});
