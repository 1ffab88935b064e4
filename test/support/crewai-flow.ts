import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { crewaiPython } from "./crewai.ts";

/**
 * CrewAI's own runtime for declarative flows (crewai_flow.py beside this file), the reference the flow tests compare
 * kubecrew with: the real package from hack/crewai-venv.sh, offline against the test's OpenAI-compatible fixture.
 */

export type Refusal = { ok: true } | { ok: false; error: string };

export interface ReferenceRun {
  /** The methods in the order CrewAI started them (a method run twice appears twice). */
  methods: string[];
  /** Each method's last output as CrewAI keeps it (`outputs.<method>`). */
  outputs: Record<string, unknown>;
  /** Every method's output in the order the methods ended (a method run twice appears twice). */
  completed: { method: string; output: unknown }[];
  /** What kickoff returned: the last method's output. */
  result: unknown;
  /** Why kickoff raised, as `<ExceptionType>: <message>`. */
  error: string | null;
  /** How many times a human_feedback asked for an answer. */
  feedback_asked: number;
}

export interface ReferenceCase {
  /** The definition as a document (written to a .json file, which CrewAI loads as it loads YAML). */
  definition: Record<string, unknown>;
  inputs?: Record<string, unknown>;
  /** The answers a human_feedback receives, in order ("" skips, as pressing Enter does). */
  feedback?: string[];
}

interface Answer {
  validate?: Refusal[];
  run?: ReferenceRun[];
}

const script = join(import.meta.dirname, "crewai_flow.py");

function call(request: unknown, baseURL?: string, pythonPath?: string): Promise<Answer> {
  const env: NodeJS.ProcessEnv = {
    ...(pythonPath ? { PYTHONPATH: pythonPath } : {}),
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    CREWAI_DISABLE_TELEMETRY: "true",
    OTEL_SDK_DISABLED: "true",
    // CrewAI's default model through the OpenAI client: the fixture, with a key that is not one.
    OPENAI_API_KEY: "sk-fixture",
    ...(baseURL ? { OPENAI_BASE_URL: baseURL } : {}),
  };
  return new Promise((resolve, reject) => {
    const child = execFile(
      crewaiPython(),
      [script],
      { env, maxBuffer: 64 * 1024 * 1024, timeout: 300_000 },
      (error, stdout, stderr) => {
        const at = stdout.lastIndexOf("@@result@@");
        if (error || at < 0) {
          reject(new Error(`crewai_flow.py failed: ${error?.message ?? "no result"}\n${stderr.slice(-4000)}`));
          return;
        }
        resolve(JSON.parse(stdout.slice(at + "@@result@@".length)) as Answer);
      },
    );
    child.stdin!.end(JSON.stringify(request));
  });
}

/** CrewAI's FlowDefinition validation of each document: accepted, or refused with pydantic's text. */
export async function crewaiValidates(documents: unknown[]): Promise<Refusal[]> {
  return (await call({ validate: documents })).validate!;
}

/**
 * Each case kicked off in CrewAI's Flow runtime, in one Python process (importing CrewAI takes seconds); `pythonPath`
 * is where the Python a case's refs name (a tool class) is imported from.
 */
export async function crewaiRuns(
  cases: ReferenceCase[],
  baseURL: string,
  pythonPath?: string,
): Promise<ReferenceRun[]> {
  const dir = mkdtempSync(join(tmpdir(), "crewai-flows-"));
  const runs = cases.map((c, i) => {
    const path = join(dir, `flow-${i}.json`);
    writeFileSync(path, JSON.stringify(c.definition));
    return { path, inputs: c.inputs ?? {}, feedback: c.feedback ?? [] };
  });
  return (await call({ run: runs }, baseURL, pythonPath)).run!;
}

/** The installed package's own example flow (crewai/flow/templates/flow_definition_example.yaml), never a copy. */
export function crewaiExampleFlow(): string {
  const python = crewaiPython();
  const init = execFileSync(python, ["-c", "import importlib.util; print(importlib.util.find_spec('crewai').origin)"], {
    encoding: "utf8",
  }).trim();
  return readFileSync(join(dirname(init), "flow", "templates", "flow_definition_example.yaml"), "utf8");
}

/** The flow the real CLI writes: `crewai create flow NAME --declarative --skip-provider` in a new folder. */
export function crewaiCreatedFlow(name: string): string {
  return readFileSync(join(crewaiCreatedFlowProject(name), "src", name, "flow.yaml"), "utf8");
}

/** The folder of the project `crewai create flow NAME --declarative --skip-provider` makes (a fresh one each call). */
export function crewaiCreatedFlowProject(name: string): string {
  const cwd = mkdtempSync(join(tmpdir(), "crewai-create-"));
  const crewai = join(dirname(crewaiPython()), "crewai");
  execFileSync(crewai, ["create", "flow", name, "--declarative", "--skip-provider"], {
    cwd,
    env: { PATH: process.env.PATH, HOME: cwd, CREWAI_DISABLE_TELEMETRY: "true", OTEL_SDK_DISABLED: "true" },
    stdio: "pipe",
    timeout: 120_000,
  });
  return join(cwd, name);
}
