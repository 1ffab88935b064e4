import { spawn } from "node:child_process";
import { once } from "node:events";

/**
 * Starts `kubecrew integrations` (the real command, registered on a commander program as cli/main.ts does) in a
 * process of its own with exactly `env` (and PATH); `done` gives its exit code and output. Killed after 60 s.
 */
export function launchIntegrationsCommand(env: Record<string, string>) {
  const script = `
    import { Command } from "commander";
    import { registerIntegrationsCommand } from "./integrations/command.ts";
    const program = new Command("kubecrew");
    registerIntegrationsCommand(program);
    await program.parseAsync(["node", "kubecrew", "integrations"]);
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    cwd: new URL("../../../", import.meta.url).pathname,
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const done = once(child, "exit").then(([code]) => {
    clearTimeout(timer);
    return { code: code as number | null, stdout, stderr };
  });
  return { child, done };
}
