import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, it } from "vitest";
import { crewYaml } from "../../support/dev-server.ts";

/** `kubecrew dev` refuses Crew manifests with fields the Crew CRD does not declare, as `kubectl apply` would. */
const repoRoot = resolve(import.meta.dirname, "../../..");
const node = join(repoRoot, "node_modules/.bin/node");
const main = join(repoRoot, "cli/main.ts");
let dir: string | undefined;
afterEach(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

async function startDev(files: Record<string, string>) {
  dir = await mkdtemp(join(tmpdir(), "kubecrew-strict-"));
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  const run = promisify(execFile)(node, [main, "dev"], {
    env: { ...process.env, KUBECREW_CREWS_DIR: dir, PORT: "0", LOG_LEVEL: "warn" },
    timeout: 20_000,
  });
  return run.then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number | null; stdout: string; stderr: string }) => err,
  );
}

it("refuses unknown fields at start-up, one line per problem naming the field path, exit status 1", async () => {
  const misspelt = crewYaml("notes", "mock", { tasks: 2 })
    .replace('role: "{topic} Writer"', 'rol: "{topic} Writer", role: "{topic} Writer"')
    .replace("metadata: { name: notes }", "metadata: { name: notes, lables: { team: a } }")
    .replace("  runner:", "  planning: true\n  runner:")
    .replace('expectedOutput: "Text 2" }', 'expectedOutput: "Text 2", async_execution: true }');
  const other = crewYaml("other", "mock", { tasks: 1 }).replace(
    "llm: { provider: mock",
    "llm: { temprature: 0.3, provider: mock",
  );
  const result = await startDev({
    "a-notes.yaml": misspelt,
    "b-other.yaml": other,
    "c-good.yaml": crewYaml("good", "mock"),
  });
  const a = join(dir!, "a-notes.yaml");
  const b = join(dir!, "b-other.yaml");
  expect(result.code).toBe(1);
  expect(result.stderr.trim().split("\n")).toEqual([
    `kubecrew dev: ${a}: Crew "notes": unknown field "metadata.lables"`,
    `kubecrew dev: ${a}: Crew "notes": unknown field "spec.agents[0].rol"`,
    `kubecrew dev: ${a}: Crew "notes": unknown field "spec.tasks[1].async_execution"`,
    `kubecrew dev: ${a}: Crew "notes": unknown field "spec.planning"`,
    `kubecrew dev: ${b}: Crew "other": unknown field "spec.llm.temprature"`,
  ]);
  expect(result.stdout).not.toContain("listening");
}, 30_000);

it("reports schema problems and YAML errors the same way, each on its own line", async () => {
  const badTypes = crewYaml("typed", "mock", { tasks: 1 }).replace("retries: 0", "retries: lots");
  const duplicate = crewYaml("twice", "mock", { tasks: 1 }).replace(
    "  runner:",
    "  llm: { provider: mock }\n  runner:",
  );
  const unknownApp = crewYaml("mailer", "mock", { tasks: 1 }).replace(
    'backstory: "Writes well." }',
    'backstory: "Writes well.", apps: [gmail/send_email, gmial] }',
  );
  const result = await startDev({ "typed.yaml": badTypes, "twice.yaml": duplicate, "mailer.yaml": unknownApp });
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split("\n");
  expect(lines).toHaveLength(3);
  expect(lines[0]).toBe(
    `kubecrew dev: ${join(dir!, "mailer.yaml")}: Crew "mailer": spec.agents[0].apps[1]: unknown app or action "gmial": ` +
      "an app (gmail, google_calendar, google_drive, google_sheets, google_docs, microsoft_outlook, microsoft_calendar, " +
      "microsoft_onedrive, microsoft_excel, microsoft_word, salesforce, hubspot, notion) or one of its actions as " +
      "app/action, e.g. gmail/send_email",
  );
  expect(lines[1]).toMatch(new RegExp(`^kubecrew dev: ${join(dir!, "twice.yaml")}: Map keys must be unique`));
  expect(lines[2]).toMatch(
    new RegExp(`^kubecrew dev: ${join(dir!, "typed.yaml")}: Crew "typed": spec\\.runner\\.retries: .+`),
  );
}, 30_000);
