import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Logger } from "../core/logger.ts";

/** How long the first creation of the virtual environment may take (a cold machine downloads CrewAI's tree). */
const ENSURE_TIMEOUT_MS = 20 * 60_000;

/**
 * The environment `runtime: crewai` tasks need under `kubecrew dev`: KUBECREW_CREWAI_PYTHON naming the Python of the
 * CrewAI virtual environment, made on first use by hack/crewai-venv.sh (once per process; crews that do not use the
 * runtime never start it). When it cannot be made, the reason is logged as one line and the task's runner reports
 * that the Python is missing.
 */
export function crewaiPythonEnv(options: { log: Logger }): () => Promise<Record<string, string>> {
  let made: Promise<Record<string, string>> | undefined;
  // In a checkout; the image has no hack/ and sets KUBECREW_CREWAI_PYTHON itself.
  const script = fileURLToPath(new URL("../hack/crewai-venv.sh", import.meta.url));
  const run = (command: string) =>
    new Promise<string>((resolve, reject) => {
      execFile("bash", [script, command], { timeout: ENSURE_TIMEOUT_MS, encoding: "utf8" }, (error, stdout, stderr) => {
        if (error) reject(new Error(stderr.trim().split("\n").at(-1) || error.message));
        else resolve(stdout.trim());
      });
    });
  const make = async (): Promise<Record<string, string>> => {
    if (!existsSync(script)) {
      options.log.error(
        "The crewai runtime needs KUBECREW_CREWAI_PYTHON: the Python of a virtual environment with CrewAI",
      );
      return {};
    }
    options.log.info("Preparing the crewai runtime's Python environment (hack/crewai-venv.sh; minutes the first time)");
    try {
      await run("ensure");
      return { KUBECREW_CREWAI_PYTHON: await run("python") };
    } catch (error) {
      options.log.error(`The crewai runtime's Python environment cannot be made: ${(error as Error).message}`);
      made = undefined; // tried again by the next crewai task
      return {};
    }
  };
  return () => (made ??= make());
}
