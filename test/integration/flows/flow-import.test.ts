import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION } from "../../../core/api-group.ts";
import { judgeFlow } from "../../../core/flow/problems.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { crewaiCreatedFlowProject } from "../../support/crewai-flow.ts";
import { createCrewAIProject } from "../import/crewai.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";

// Issue 33: `kubecrew import crewai` takes the bare declarative flow the real CLI writes (`crewai create flow NAME
// --declarative --skip-provider`, the project folder or its flow.yaml) and prints a Flow manifest whose spec is the
// document unchanged; kubecrew's own checks accept it, and kubecrew dev runs it. Before, the import said the folder
// is not a CrewAI project.

const repoRoot = resolve(import.meta.dirname, "../../..");
const node = join(repoRoot, "node_modules/.bin/node");
const main = join(repoRoot, "cli/main.ts");

function kubecrew(args: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    execFile(node, [main, ...args], { timeout: 30_000 }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let project: string;
let dev: RunningDev | undefined;
beforeAll(() => {
  project = crewaiCreatedFlowProject("news_flow");
}, 180_000);
afterAll(() => dev?.stop());

describe("kubecrew import crewai on a declarative flow", () => {
  it("prints the Flow of the project `crewai create flow --declarative` writes, and kubecrew dev runs it", async () => {
    const { code, stdout, stderr } = await kubecrew(["import", "crewai", project]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const manifest = parse(stdout) as { apiVersion: string; kind: string; metadata: object; spec: unknown };
    expect(manifest).toMatchObject({ apiVersion: API_VERSION, kind: "Flow", metadata: { name: "news-flow" } });
    expect(manifest.spec).toEqual(parse(await readFlowYaml()));
    expect(judgeFlow(manifest.spec).ok).toBe(true);

    const fromFile = await kubecrew(["import", "crewai", join(project, "src/news_flow/flow.yaml"), "--name", "news"]);
    expect(fromFile.code).toBe(0);
    expect(parse(fromFile.stdout)).toEqual({ ...manifest, metadata: { name: "news" } });

    dev = await startTestDev({ "news-flow.yaml": stdout });
    const headers = { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" };
    const kickoff = await fetch(`${dev.url}/flows/news-flow/kickoff`, { method: "POST", headers, body: "{}" });
    const { kickoff_id } = (await kickoff.json()) as { kickoff_id: string };
    const done = await waitFor(async () => {
      const res = await fetch(`${dev!.url}/flows/news-flow/status/${kickoff_id}`, { headers });
      const body = (await res.json()) as { status: string; result?: { output: string } };
      return body.status === "running" ? undefined : body;
    });
    // The generated flow's one method answers the state's default topic.
    expect(done).toMatchObject({ status: "completed", result: { output: "AI agents" } });
  }, 120_000);

  it("puts a crew from_declaration (a JSON crew the real CLI writes) inline, and kubecrew dev runs it", async () => {
    const { parent } = await createCrewAIProject("trend_watch", "json");
    const flowFile = join(parent, "trends.yaml");
    await writeFile(
      flowFile,
      `schema: crewai.flow/v1
name: TrendsFlow
methods:
  watch:
    start: true
    do: { call: crew, from_declaration: trend_watch, inputs: { topic: "tide pools" } }
  done:
    listen: watch
    do: { call: expression, expr: "'watched: ' + outputs.watch.raw" }
`,
    );
    // The template's crew keeps memory, which kubecrew refuses (as it refuses it in any crew): named at import.
    const refused = await kubecrew(["import", "crewai", flowFile]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/methods\.watch\.do: memory: kubecrew keeps no memory/);
    const crewFile = join(parent, "trend_watch", "crew.jsonc");
    await writeFile(crewFile, (await readFile(crewFile, "utf8")).replace('"memory": true', '"memory": false'));
    // And its agent names OpenAI's model: left out, it runs on kubecrew dev's (the mock, no key here).
    const agentFile = join(parent, "trend_watch", "agents", "researcher.jsonc");
    await writeFile(agentFile, (await readFile(agentFile, "utf8")).replace('"llm": "openai/gpt-4o",', ""));
    const { code, stdout, stderr } = await kubecrew(["import", "crewai", flowFile]);
    expect(code).toBe(0);
    expect(stderr).toContain("methods.watch.do: the crew from_declaration trend_watch is put inline (with)");
    const spec = (parse(stdout) as { spec: { methods: Record<string, { do: Record<string, unknown> }> } }).spec;
    expect(spec.methods.watch!.do).not.toHaveProperty("from_declaration");
    expect(spec.methods.watch!.do).toMatchObject({ call: "crew", inputs: { topic: "tide pools" } });
    const crew = spec.methods.watch!.do.with as { agents: Record<string, unknown>; tasks: unknown[] };
    expect(Object.keys(crew.agents).length).toBeGreaterThan(0);
    expect(crew.tasks.length).toBeGreaterThan(0);
    expect(judgeFlow(spec).ok).toBe(true);

    await dev?.stop();
    dev = await startTestDev({ "trends-flow.yaml": stdout });
    const headers = { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" };
    const kickoff = await fetch(`${dev.url}/flows/trends-flow/kickoff`, { method: "POST", headers, body: "{}" });
    const { kickoff_id } = (await kickoff.json()) as { kickoff_id: string };
    const done = await waitFor(async () => {
      const res = await fetch(`${dev!.url}/flows/trends-flow/status/${kickoff_id}`, { headers });
      const body = (await res.json()) as { status: string; result?: { output: string } };
      return body.status === "running" ? undefined : body;
    }, 120_000);
    expect(done, JSON.stringify(done)).toMatchObject({
      status: "completed",
      result: { output: expect.stringMatching(/^watched: \[mock llm\]/) },
    });
  }, 300_000);

  it("refuses a flow kubecrew would refuse on apply, naming each problem, and crew-only options", async () => {
    const broken = join(project, "broken-flow.yaml");
    await writeFile(
      broken,
      (await readFlowYaml()).replace(
        "methods:",
        "methods:\n  after:\n    listen: strat\n    do: { call: expression, expr: '1' }",
      ),
    );
    const refused = await kubecrew(["import", "crewai", broken]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${broken}: methods.after.listen: "strat" names no method`);
    expect(refused.stdout).toBe("");
    const llm = await kubecrew(["import", "crewai", project, "--llm", "openai/gpt-4o-mini"]);
    expect(llm.code).toBe(1);
    expect(llm.stderr).toMatch(/--llm: for crews only/);
  });
});

const readFlowYaml = () => readFile(join(project, "src/news_flow/flow.yaml"), "utf8");
