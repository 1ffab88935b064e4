import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { crew as crewSchema } from "../../../core/crew-resource.ts";
import { crewYaml } from "../../support/dev-server.ts";
import { createCrewAIProject } from "./crewai.ts";

/** `kubecrew import crewai` and `kubecrew dev`'s start-up, as a user runs them, on projects CrewAI's CLI writes. */

const repoRoot = resolve(import.meta.dirname, "../../..");
const node = join(repoRoot, "node_modules/.bin/node");
const main = join(repoRoot, "cli/main.ts");
const fixtures = join(import.meta.dirname, "fixtures");
let classic: string;
let jsonFirst: string;

beforeAll(async () => {
  classic = (await createCrewAIProject("market_digest", "classic")).project;
  jsonFirst = (await createCrewAIProject("trend_watch", "json")).project;
}, 240_000);

function kubecrew(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    execFile(node, [main, ...args], { env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("kubecrew import crewai", () => {
  it("prints the Crew of the project `crewai create crew --classic` writes, its notes on stderr", async () => {
    const { code, stdout, stderr } = await kubecrew(["import", "crewai", classic]);
    expect(code).toBe(0);
    const manifest = parse(stdout) as Record<string, unknown>;
    const crew = crewSchema.parse(manifest);
    expect(crew.metadata).toEqual({ name: "market-digest" });
    expect(crew.spec.agents.map((a) => a.name)).toEqual(["researcher", "reporting_analyst"]);
    expect(crew.spec.tasks.map((t) => [t.name, t.agent])).toEqual([
      ["research_task", "researcher"],
      ["reporting_task", "reporting_analyst"],
    ]);
    expect(crew.spec.inputs.map((i) => i.name)).toEqual(["topic", "current_year"]);
    expect(stderr.trim().split("\n")).toEqual([
      `kubecrew import: note: ${join(classic, "src/market_digest/crew.py")}: read for its process and its methods' names only: what it sets in Python (tools, output_file, …) is not carried`,
      "kubecrew import: note: agents researcher, reporting_analyst name no llm: they run on spec.llm, which this " +
        "manifest leaves out — kubecrew dev fills in its own model (KUBECREW_LLM_PROVIDER …); for a cluster add one " +
        "with --llm provider/model",
    ]);
  });

  it("writes the manifest with -o, named and placed by --name and --namespace, with --llm as spec.llm", async () => {
    const out = join(await mkdtemp(join(tmpdir(), "kubecrew-import-")), "crew.yaml");
    const args = [
      "--name",
      "digest",
      "--namespace",
      "research",
      "--llm",
      "openai/gpt-4o-mini",
      "--runtime",
      "kubecrew",
    ];
    const { code, stdout, stderr } = await kubecrew(["import", "crewai", classic, "-o", out, ...args]);
    expect(code).toBe(0);
    expect(stdout).toBe("");
    expect(stderr).toContain(`kubecrew import: wrote ${out}`);
    expect(stderr).not.toContain("name no llm");
    const crew = crewSchema.parse(parse(await readFile(out, "utf8")));
    expect(crew.metadata).toEqual({ name: "digest", namespace: "research" });
    expect(crew.spec.llm).toEqual({ provider: "openai", model: "gpt-4o-mini" });
    expect(crew.spec.runtime).toBe("kubecrew");
  });

  it("refuses the JSON-first project `crewai create crew` writes for its crew memory, writing nothing", async () => {
    const out = join(await mkdtemp(join(tmpdir(), "kubecrew-import-")), "crew.yaml");
    const { code, stdout, stderr } = await kubecrew(["import", "crewai", jsonFirst, "-o", out]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(existsSync(out)).toBe(false);
    const crewFile = join(jsonFirst, "crew.jsonc");
    expect(stderr.trim().split("\n")).toEqual([
      `kubecrew import: note: ${crewFile}: verbose: kubecrew records every step of every task whatever this says (kubecrew logs, /status/{id}/events)`,
      `kubecrew import: ${crewFile}: memory: kubecrew keeps no memory between tasks or runs beyond the task context: ` +
        "remove it (or set it to false), or deploy the crew on the crewai runtime with an image holding your project",
    ]);
    const onCrewai = await kubecrew(["import", "crewai", jsonFirst, "--runtime", "crewai"]);
    expect(onCrewai.code).toBe(1);
    expect(onCrewai.stderr.trim().split("\n").slice(1)).toEqual([
      expect.stringContaining(`${crewFile}: memory: `),
      "kubecrew import: --runtime crewai: a Crew cannot carry the fields above to the crewai runtime yet",
    ]);
    // As the line says: without crew memory it imports, the agent's model carried.
    const edited = (await readFile(crewFile, "utf8")).replace('"memory": true', '"memory": false');
    await writeFile(crewFile, edited);
    const again = await kubecrew(["import", "crewai", crewFile]);
    expect(again.code).toBe(0);
    const crew = crewSchema.parse(parse(again.stdout));
    expect(crew.metadata.name).toBe("trend-watch");
    expect(crew.spec.agents[0]).toMatchObject({ name: "researcher", llm: { provider: "openai", model: "gpt-4o" } });
    await writeFile(crewFile, edited.replace('"memory": false', '"memory": true'));
  });

  it("imports an inline definition file; refuses a missing path and a wrong option in one line", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kubecrew-import-"));
    const file = join(dir, "Weekly Review.yaml");
    await writeFile(
      file,
      'agents:\n  reviewer: { role: Reviewer, goal: "Review {topic}", backstory: Careful. }\n' +
        'tasks:\n  - { name: review, description: "Review {topic}.", expected_output: Notes., agent: reviewer }\n',
    );
    const ok = await kubecrew(["import", "crewai", file]);
    expect(ok.code).toBe(0);
    expect(crewSchema.parse(parse(ok.stdout)).metadata.name).toBe("weekly-review");

    expect(await kubecrew(["import", "crewai", join(dir, "nothing")])).toMatchObject({
      code: 1,
      stderr: `kubecrew import: ${join(dir, "nothing")}: no such file or folder\n`,
    });
    expect(await kubecrew(["import", "crewai", file, "--runtime", "python"])).toMatchObject({
      code: 1,
      stderr: 'kubecrew import: --runtime: "python" is not one of kubecrew, crewai\n',
    });
    expect(await kubecrew(["import", "crewai", file, "--llm", "gemini/gemini-2.0-flash"])).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^kubecrew import: --llm: "gemini\/gemini-2.0-flash": kubecrew's runtime calls/),
    });
  });
});

describe("kubecrew dev's start-up with CrewAI projects", () => {
  it("refuses what it cannot run, one line per problem naming the file, and starts nothing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kubecrew-dev-crewai-"));
    await cp(jsonFirst, join(dir, "trend_watch"), { recursive: true });
    await cp(join(fixtures, "launch-plan"), join(dir, "launch-plan"), { recursive: true });
    const tasks = join(dir, "launch-plan/config/tasks.yaml");
    await writeFile(tasks, (await readFile(tasks, "utf8")).replace("agent: announcer", "agent: herald"));
    await writeFile(join(dir, "notes.yaml"), crewYaml("notes", "mock", { tasks: 1 }));
    const { code, stdout, stderr } = await kubecrew(["dev"], { KUBECREW_CREWS_DIR: dir, PORT: "0", LOG_LEVEL: "warn" });
    expect(code).toBe(1);
    expect(stdout).not.toContain("listening");
    expect(stderr.trim().split("\n")).toEqual([
      `kubecrew dev: ${tasks}: announcement.agent: names agent "herald", which the crew does not define`,
      `kubecrew dev: ${join(dir, "trend_watch/crew.jsonc")}: memory: kubecrew keeps no memory between tasks or runs ` +
        "beyond the task context: remove it (or set it to false), or deploy the crew on the crewai runtime with an " +
        "image holding your project",
    ]);
  });

  it("starts in a CrewAI project's folder, names its crew in the banner and logs the import's notes", async () => {
    const child = spawn(node, [main, "dev"], {
      env: { ...process.env, KUBECREW_CREWS_DIR: classic, PORT: "0", LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    try {
      await new Promise<void>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`no banner in 30 s:\n${output}`)), 30_000);
        child.stdout.on("data", () => {
          if (output.includes("default crew:")) {
            clearTimeout(timer);
            done();
          }
        });
        child.on("exit", () => fail(new Error(`kubecrew dev exited:\n${output}`)));
      });
    } finally {
      child.kill("SIGTERM");
    }
    expect(output).toMatch(/crews: {8}market-digest\n/);
    const notes = output
      .split("\n")
      .filter((l) => l.includes("CrewAI crew imported"))
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(notes).toEqual([
      `CrewAI crew imported: ${join(classic, "src/market_digest/crew.py")}: read for its process and its methods' names only: what it sets in Python (tools, output_file, …) is not carried`,
    ]);
  });
});
