import { describe, expect, it } from "vitest";
import { inlineDefinition, jsonProjectDefinition, yamlProjectDefinition, type CrewPy } from "./definition.ts";
import { Findings } from "./findings.ts";
import { importCrewAI, type ImportOptions } from "./import-crew.ts";

const agent = { role: "Writer on {topic}", goal: "Write about {topic}", backstory: "Writes well." };
const task = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `Do ${name} on {topic}`,
  expected_output: `The ${name}`,
  agent: "writer",
  ...extra,
});
const crewPy = (parts: Partial<CrewPy>): CrewPy => ({
  origin: { file: "crew.py", path: "" },
  fields: {},
  taskMethods: [],
  llmMethods: [],
  ...parts,
});

function imported(doc: unknown, options: ImportOptions = {}) {
  const findings = new Findings();
  const definition = inlineDefinition({ file: "crew.yaml", value: doc }, "my_crew", findings);
  if (!definition) return { ok: false as const, problems: findings.problems, notes: findings.notes };
  return importCrewAI(definition, options, findings);
}

function manifest(doc: unknown, options: ImportOptions = {}) {
  const result = imported(doc, options);
  if (!result.ok) throw new Error(`refused:\n${result.problems.join("\n")}`);
  return result;
}

describe("the three shapes", () => {
  it("reads agents given as a list, with names or as one-key mappings, as CrewDefinition does", () => {
    const { manifest: m } = manifest({
      agents: [{ name: "writer", ...agent }, { editor: { role: "Editor", goal: "Edit", backstory: "b" } }],
      tasks: [task("draft"), task("edit", { agent: "editor" })],
    });
    expect(m.spec.agents.map((a) => a.name)).toEqual(["writer", "editor"]);
  });

  it("reads a JSON-first project: agents from their files, settings winning over the same field beside them", () => {
    const findings = new Findings();
    const files: Record<string, unknown> = {
      writer: { ...agent, max_iter: 3, settings: { max_iter: 9 } },
    };
    const definition = jsonProjectDefinition(
      { file: "crew.jsonc", value: { name: "j", agents: ["writer", "missing"], tasks: [task("draft")] } },
      (name) => (name in files ? { file: `agents/${name}.jsonc`, value: files[name] } : { error: "no file" }),
      "folder",
      findings,
    )!;
    expect(findings.problems).toEqual(["crew.jsonc: agents[1]: no file"]);
    const ok = importCrewAI({ ...definition }, {}, new Findings());
    expect(ok.ok && ok.manifest.spec.agents[0]!.maxIter).toBe(9);
  });

  it("refuses in a YAML project what @CrewBase cannot read: an llm mapping, a model built by an @llm method", () => {
    const findings = new Findings();
    const definition = yamlProjectDefinition(
      {
        file: "config/agents.yaml",
        value: {
          writer: { ...agent, llm: { model: "openai/gpt-4o", temperature: 0.1 } },
          editor: { ...agent, llm: "house_model" },
          checker: { ...agent, llm: "openai/house_model" },
        },
      },
      { file: "config/tasks.yaml", value: { draft: task("draft") } },
      crewPy({ llmMethods: ["house_model"] }),
      "proj",
      findings,
    )!;
    const result = importCrewAI(definition, {}, findings);
    expect(result.ok ? [] : result.problems).toEqual([
      'config/agents.yaml: writer.llm: CrewAI reads a model name here ("provider/model"), not a mapping: write it as one',
      "config/agents.yaml: editor.llm: names crew.py's @llm method house_model, a model built in Python: it needs Python, which the kubecrew runtime does not run: remove it, or deploy the crew on the crewai runtime with an image holding your project",
    ]);
  });

  it("runs a YAML project's tasks in the order of crew.py's @task methods, as @CrewBase does", () => {
    const findings = new Findings();
    const definition = yamlProjectDefinition(
      { file: "config/agents.yaml", value: { writer: agent } },
      { file: "config/tasks.yaml", value: { outline: task("outline"), draft: task("draft"), spare: task("spare") } },
      crewPy({ taskMethods: ["draft", "outline", "python_only"] }),
      "proj",
      findings,
    )!;
    expect(definition.tasks.map((t) => t.fields.name)).toEqual(["draft", "outline"]);
    expect(findings.notes).toEqual([
      "config/tasks.yaml: spare: left out: crew.py has no @task method for it, so CrewAI does not run it",
    ]);
    expect(findings.problems).toEqual([
      "crew.py: @task python_only: a task written in Python only, which kubecrew cannot read: write it in config/tasks.yaml under that name, or deploy the crew on the crewai runtime with an image holding your project",
    ]);
  });

  it("reads a YAML project: tasks named by their keys in file order, the process from crew.py", () => {
    const findings = new Findings();
    const definition = yamlProjectDefinition(
      { file: "config/agents.yaml", value: { writer: agent } },
      { file: "config/tasks.yaml", value: { outline: task("ignored"), draft: { ...task("draft"), name: undefined } } },
      crewPy({ fields: { process: "hierarchical" } }),
      "proj",
      findings,
    )!;
    expect(findings.problems).toEqual([
      'config/tasks.yaml: outline.name: kubecrew names a task by its key in config/tasks.yaml ("outline"), which its context names it by: remove name',
    ]);
    expect(definition.tasks.map((t) => t.fields.name)).toEqual(["outline", "draft"]);
    const result = importCrewAI(definition, {}, findings);
    expect(result.ok ? [] : result.problems).toContain(
      "crew.py: process: the hierarchical process needs a manager, which crew.py gives in Python (manager_llm or manager_agent) and kubecrew cannot read: add managerLlm to the imported Crew, or deploy the crew on the crewai runtime with an image holding your project",
    );
  });
});
