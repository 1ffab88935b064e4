import { readFileSync } from "node:fs";
import { cp, mkdtemp, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { CREWAI_DEFAULT_MAX_ITER } from "../../../core/crewai-import/agent.ts";
import { agentFieldRules, crewFieldRules, taskFieldRules } from "../../../core/crewai-import/field-rules.ts";
import { importCrewAI, type CrewManifest, type ImportResult } from "../../../core/crewai-import/import-crew.ts";
import { parseJsonc } from "../../../core/crewai-import/jsonc.ts";
import { DEFAULT_GUARDRAIL_MAX_RETRIES } from "../../../core/task-guardrails.ts";
import { readCrewAIPath } from "../../../dev/crewai-projects.ts";
import {
  createCrewAIProject,
  crewaiVerdicts,
  renderJsonCrewTemplate,
  templateCrew,
  type CrewAISummary,
  type CrewAIVerdict,
  type VerdictCase,
} from "./crewai.ts";
import { conformanceTable, type Row } from "./conformance-table.ts";

/**
 * kubecrew accepts what CrewAI accepts and refuses what it refuses: every definition of the table, every fixture
 * and the projects CrewAI's own CLI writes are judged by the pinned crewai package (its CrewDefinition, its JSON-first
 * validation, then building the Crew, as `crewai run` would, without calling a model) and by `kubecrew import`.
 * Where CrewAI accepts what kubecrew cannot honour, the table names the fields kubecrew refuses, each with advice.
 * What kubecrew accepts is compared with what CrewAI built from it, field by field.
 */

const fixtures = join(import.meta.dirname, "fixtures");
const verdicts = new Map<string, CrewAIVerdict>();
const rowFiles = new Map<string, string>();
let classic: string;
let jsonFirst: string;
let template: string;
let llmMapping: string;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), "kubecrew-conformance-"));
  const cases: VerdictCase[] = [];
  for (const row of conformanceTable) {
    const file = join(dir, `${row.id}.${row.format ?? "yaml"}`);
    await writeFile(file, row.format === "json" ? JSON.stringify(row.doc, null, 2) : stringify(row.doc));
    rowFiles.set(row.id, file);
    cases.push({ id: row.id, kind: "inline", path: file, build: row.build ?? true });
  }
  cases.push({ id: "fixture:research-brief", kind: "json-project", path: join(fixtures, "research-brief/crew.jsonc") });
  cases.push({ id: "fixture:launch-plan", kind: "crewbase", path: join(fixtures, "launch-plan/crew.py") });
  cases.push({ id: "fixture:release-check", kind: "inline", path: join(fixtures, "release-check.yaml") });
  // A YAML project whose agent's llm is a mapping, which @CrewBase cannot read (JSON-first and inline crews can).
  llmMapping = join(dir, "llm-mapping");
  await cp(join(fixtures, "launch-plan"), llmMapping, { recursive: true });
  const agentsYaml = join(llmMapping, "config/agents.yaml");
  const mapping = "llm:\n    model: ollama/llama3.1\n    temperature: 0.2\n";
  await writeFile(agentsYaml, readFileSync(agentsYaml, "utf8").replace("llm: ollama/llama3.1\n", mapping));
  cases.push({ id: "yaml:llm-mapping", kind: "crewbase", path: join(llmMapping, "crew.py") });
  classic = (await createCrewAIProject("market_digest", "classic")).project;
  cases.push({ id: "cli:classic", kind: "crewbase", path: join(classic, "src"), module: "market_digest" });
  jsonFirst = (await createCrewAIProject("trend_watch", "json")).project;
  cases.push({ id: "cli:json", kind: "json-project", path: join(jsonFirst, "crew.jsonc") });
  cases.push({ id: "model-fields", kind: "model-fields" });
  template = join(dir, "rendered_template");
  await renderJsonCrewTemplate(
    template,
    "Rendered Template",
    templateCrew.agents,
    templateCrew.tasks,
    templateCrew.inputs,
  );
  cases.push({ id: "template:json_crew", kind: "json-project", path: join(template, "crew.jsonc") });
  for (const [id, verdict] of await crewaiVerdicts(cases)) verdicts.set(id, verdict);
}, 600_000);

async function kubecrewImport(path: string): Promise<ImportResult> {
  const source = await readCrewAIPath(path);
  if (!source.definition) return { ok: false, problems: source.findings.problems, notes: source.findings.notes };
  return importCrewAI(source.definition, {}, source.findings);
}

/** What kubecrew imported is what CrewAI built: texts, agents, models, tools, context, async, inputs. */
function expectSameCrew(summary: CrewAISummary, manifest: CrewManifest) {
  const { spec } = manifest;
  expect(summary.process).toBe(spec.process);
  for (const [name, value] of Object.entries(summary.inputs)) {
    expect(spec.inputs).toContainEqual({ name, default: value });
  }
  expect(spec.agents).toHaveLength(summary.agents.length);
  summary.agents.forEach((a, i) => {
    const agent = spec.agents[i]!;
    expect([agent.role, agent.goal, agent.backstory]).toEqual([
      a.role.trimEnd(),
      a.goal.trimEnd(),
      a.backstory.trimEnd(),
    ]);
    expect(agent.maxIter).toBe(a.max_iter);
    if (agent.llm) {
      const provider = { openai: "openai", anthropic: "anthropic", ollama: "openai-compatible" }[a.llm!.provider];
      expect(agent.llm).toMatchObject({ provider, model: a.llm!.model });
      if (a.llm!.base_url) expect(agent.llm.baseURL).toBe(a.llm!.base_url);
      if (a.llm!.temperature !== null) expect(agent.llm.temperature).toBe(a.llm!.temperature);
    }
    // CrewAI keeps an agent's apps as a set.
    expect([...(agent.apps ?? [])].sort()).toEqual([...(a.apps ?? [])].sort());
    const mcps = a.mcps.map((m, j) => {
      if (typeof m === "string") return m;
      const server = spec.mcpServers!.find((s) => s.name === agent.mcps![j])!;
      return { url: server.url, streamable: server.transport !== "sse" };
    });
    expect(mcps).toEqual(a.mcps);
  });
  expect(spec.tasks).toHaveLength(summary.tasks.length);
  summary.tasks.forEach((t, i) => {
    const task = spec.tasks[i]!;
    expect(task.name).toBe(t.name ?? `task_${i + 1}`);
    expect([task.description, task.expectedOutput]).toEqual([t.description.trimEnd(), t.expected_output.trimEnd()]);
    expect(spec.agents.find((a) => a.name === task.agent)!.role).toBe(t.agent!.trimEnd());
    expect(task.context ?? null).toEqual(t.context);
    expect(task.asyncExecution ?? false).toBe(t.async_execution);
    expect(task.humanInput ?? false).toBe(t.human_input);
    expect(task.outputJson !== undefined).toBe(t.structured_output);
    // CrewAI checks guardrails when there are any, else guardrail; kubecrew's task carries the one CrewAI checks.
    if (t.guardrails?.length) expect(task.guardrails).toEqual(t.guardrails.map((llm) => ({ llm })));
    else expect(task.guardrail ?? null).toBe(t.guardrail);
    if (task.outputJson || task.guardrail || task.guardrails) {
      expect(task.guardrailMaxRetries ?? DEFAULT_GUARDRAIL_MAX_RETRIES).toBe(t.guardrail_max_retries);
    }
  });
}

describe("the table of definitions", () => {
  it.each(conformanceTable.map((row) => [row.id, row] as const))("%s", async (_id, row: Row) => {
    const verdict = verdicts.get(row.id)!;
    const result = await kubecrewImport(rowFiles.get(row.id)!);
    // The table says what CrewAI does; CrewAI must agree, or the row is wrong.
    expect({ id: row.id, crewai: verdict.accepted, errors: verdict.errors }).toMatchObject({
      crewai: row.crewai === "accepts",
    });
    if (row.crewai === "refuses") {
      expect(result.ok, "kubecrew refuses what CrewAI refuses").toBe(false);
      return;
    }
    if (row.unsupported) {
      expect(result.ok).toBe(false);
      const problems = result.ok ? [] : result.problems;
      const named = (field: string) =>
        problems.filter((p) => new RegExp(`\\.yaml: (\\S+\\.)?${field}(\\[\\d+\\])?: `).test(p));
      for (const field of row.unsupported) expect(named(field), `a problem names ${field}`).not.toHaveLength(0);
      // Each problem names one of the fields and says what to do instead.
      for (const p of problems) {
        expect(
          row.unsupported.some((f) => named(f).includes(p)),
          p,
        ).toBe(true);
        expect(p).toMatch(/remove|instead|deploy|give|put|ask|write|serve|set/);
      }
      return;
    }
    expect(result.ok ? [] : result.problems).toEqual([]);
    if (result.ok && verdict.crew) expectSameCrew(verdict.crew, result.manifest);
  });
});

describe("the fixtures and the projects CrewAI's CLI writes", () => {
  it.each([
    "fixture:research-brief",
    "fixture:launch-plan",
    "fixture:release-check",
    "cli:classic",
    "template:json_crew",
  ])("%s: accepted by both, the same crew", async (id) => {
    const path = {
      "fixture:research-brief": join(fixtures, "research-brief"),
      "fixture:launch-plan": join(fixtures, "launch-plan"),
      "fixture:release-check": join(fixtures, "release-check.yaml"),
      "cli:classic": classic,
      "template:json_crew": template,
    }[id]!;
    const verdict = verdicts.get(id)!;
    expect(verdict.errors).toEqual([]);
    const result = await kubecrewImport(path);
    expect(result.ok ? [] : result.problems).toEqual([]);
    expectSameCrew(verdict.crew!, (result as Extract<ImportResult, { ok: true }>).manifest);
  });

  it("the JSON-first project `crewai create crew` writes: CrewAI accepts it; kubecrew refuses its crew memory only", async () => {
    expect(verdicts.get("cli:json")!.errors).toEqual([]);
    const result = await kubecrewImport(jsonFirst);
    expect(result.ok ? [] : result.problems).toEqual([
      expect.stringMatching(/crew\.jsonc: memory: kubecrew keeps no memory .*remove it \(or set it to false\)/),
    ]);
  });

  it("a YAML project whose agent's llm is a mapping: refused by both (@CrewBase reads a model name there)", async () => {
    expect(verdicts.get("yaml:llm-mapping")!.accepted).toBe(false);
    const result = await kubecrewImport(llmMapping);
    expect(result.ok ? [] : result.problems).toEqual([
      `${join(llmMapping, "config/agents.yaml")}: planner.llm: CrewAI reads a model name here ("provider/model"), not a mapping: write it as one`,
    ]);
  });

  it("reads every JSON-first file as CrewAI's JSONC parser reads it", () => {
    let files = 0;
    for (const id of ["fixture:research-brief", "cli:json", "template:json_crew"]) {
      for (const [file, value] of Object.entries(verdicts.get(id)!.jsonc!)) {
        files++;
        expect(parseJsonc(readFileSync(file, "utf8")), file).toEqual(value);
      }
    }
    expect(files).toBeGreaterThanOrEqual(5);
  });

  it("judges exactly the fields CrewAI's Agent, Task and Crew have (none is dropped without a word)", () => {
    const fields = verdicts.get("model-fields")!.fields!;
    expect(Object.keys(agentFieldRules).sort()).toEqual(fields.agent);
    expect(Object.keys(taskFieldRules).sort()).toEqual(fields.task);
    expect(Object.keys(crewFieldRules).sort()).toEqual(fields.crew);
    expect(CREWAI_DEFAULT_MAX_ITER).toBe(fields.max_iter);
  });

  it("every fixture of this folder is judged by CrewAI above", async () => {
    expect((await readdir(fixtures)).sort()).toEqual(["launch-plan", "release-check.yaml", "research-brief"]);
  });
});
