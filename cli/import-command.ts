import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { stringify } from "yaml";
import { crewRuntimes, type CrewRuntime, type LlmConfig } from "../core/crew.ts";
import { importCrewAI } from "../core/crewai-import/import-crew.ts";
import { Findings } from "../core/crewai-import/findings.ts";
import { llmFromCrewAI } from "../core/crewai-import/llm.ts";
import { readCrewAIPath } from "../dev/crewai-projects.ts";
import { findCrewAIFlow, importCrewAIFlow } from "../dev/crewai-flows.ts";
import { reportFailures } from "./api-command.ts";
import { CommandFailure } from "./command-failure.ts";

interface ImportOptions {
  output?: string;
  name?: string;
  namespace?: string;
  llm?: string;
  runtime?: string;
}

/** `kubecrew import crewai PATH`: a CrewAI crew (YAML project, JSON-first project, inline definition) as a Crew. */
export function registerImportCommand(program: Command): void {
  const command = program.command("import").description("Turn another framework's crew into a kubecrew Crew manifest");
  command
    .command("crewai")
    .description(
      "Print the Crew manifest of a CrewAI crew: a project folder (config/agents.yaml + config/tasks.yaml, or " +
        "crew.jsonc + agents/), a crew.jsonc, or an inline definition file (YAML or JSON); or the Flow manifest of " +
        "a declarative flow (a crewai.flow/v1 file, or the project crewai create flow --declarative makes)",
    )
    .argument("<path>", "the project folder or the file")
    .option("-o, --output <file>", "write the manifest to this file instead of printing it")
    .option(
      "--name <name>",
      "the Crew's or Flow's name (default: the crew's or flow's name, else its folder's or file's)",
    )
    .option("--namespace <namespace>", "the Crew's namespace")
    .option("--llm <provider/model>", "spec.llm, the model of agents that name none (e.g. openai/gpt-4o-mini)")
    .option("--runtime <runtime>", `what runs the tasks: ${crewRuntimes.join(" or ")} (default: kubecrew)`)
    .action(async (path: string, options: ImportOptions) => {
      await reportFailures("import", async () => {
        const yaml = await importedManifest(path, options, (note) =>
          process.stderr.write(`kubecrew import: note: ${note}\n`),
        );
        if (!options.output) {
          process.stdout.write(yaml);
          return;
        }
        await writeFile(options.output, yaml).catch((err: NodeJS.ErrnoException) => {
          throw new CommandFailure(`${options.output}: cannot write it (${err.code ?? err.message})`);
        });
        process.stderr.write(`kubecrew import: wrote ${options.output}\n`);
      });
    });
}

/** The manifest as YAML; the notes go to `onNote`; every problem at once in one CommandFailure, one line each. */
async function importedManifest(path: string, options: ImportOptions, onNote: (note: string) => void): Promise<string> {
  const flow = await findCrewAIFlow(path);
  if (flow) return await importedFlow(flow.file, flow.document, options, onNote);
  const findings = new Findings();
  const runtime = runtimeOption(options.runtime);
  const llm = options.llm !== undefined ? llmOption(options.llm) : undefined;
  const source = await readCrewAIPath(path);
  const result = source.definition
    ? importCrewAI(
        source.definition,
        {
          ...(options.name !== undefined ? { name: options.name } : {}),
          ...(options.namespace ? { namespace: options.namespace } : {}),
          ...(runtime ? { runtime } : {}),
          ...(llm ? { llm } : {}),
        },
        source.findings,
      )
    : { ok: false as const, problems: source.findings.problems, notes: source.findings.notes };
  findings.notes.push(...result.notes);
  if (result.ok && !llm && result.manifest.spec.agents.some((a) => !a.llm)) {
    const names = result.manifest.spec.agents.filter((a) => !a.llm).map((a) => a.name);
    findings.notes.push(
      `agents ${names.join(", ")} name no llm: they run on spec.llm, which this manifest leaves out — kubecrew dev ` +
        "fills in its own model (KUBECREW_LLM_PROVIDER …); for a cluster add one with --llm provider/model",
    );
  }
  findings.notes.forEach(onNote);
  if (!result.ok && runtime === "crewai") {
    // The crewai runtime runs CrewAI itself, but a Crew has no fields yet for what only CrewAI's Python runs.
    result.problems.push("--runtime crewai: a Crew cannot carry the fields above to the crewai runtime yet");
  }
  if (!result.ok) throw new CommandFailure(result.problems.join("\nkubecrew import: "));
  return stringify(result.manifest, { lineWidth: 0 });
}

/** A declarative flow's manifest: the document as the spec, a crew from_declaration put inline. */
async function importedFlow(
  file: string,
  document: unknown,
  options: ImportOptions,
  onNote: (note: string) => void,
): Promise<string> {
  const given = [options.llm !== undefined && "--llm", options.runtime !== undefined && "--runtime"].filter(Boolean);
  if (given.length) {
    throw new CommandFailure(`${given.join(", ")}: for crews only; a flow's agents and crews name their own llm`);
  }
  const result = await importCrewAIFlow(file, document, {
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.namespace ? { namespace: options.namespace } : {}),
  });
  result.notes.forEach(onNote);
  if (!result.ok) throw new CommandFailure(result.problems.join("\nkubecrew import: "));
  return stringify(result.manifest, { lineWidth: 0 });
}

function runtimeOption(value: string | undefined): CrewRuntime | undefined {
  if (value === undefined) return undefined;
  if ((crewRuntimes as readonly string[]).includes(value)) return value as CrewRuntime;
  throw new CommandFailure(`--runtime: "${value}" is not one of ${crewRuntimes.join(", ")}`);
}

function llmOption(value: string): LlmConfig {
  const findings = new Findings();
  const llm = llmFromCrewAI(value, "--llm", findings);
  if (!llm) throw new CommandFailure(findings.problems.join("\nkubecrew import: "));
  return llm;
}
