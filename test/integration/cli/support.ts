import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../../../dev/config.ts";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunningCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<CliResult>;
}

/** A home of its own for a CLI run: no saved login of the machine's user is read or written. */
export const emptyHome = () => mkdtempSync(join(tmpdir(), "kubecrew-cli-home-"));

/**
 * `node cli/main.ts <args>` as a user runs it, with only PATH and the given variables (HOME a fresh directory unless
 * given): stdout and stderr are pipes, so not a terminal.
 */
export function startCli(args: string[], env: Record<string, string>, stdin?: string): RunningCli {
  const child = spawn(process.execPath, [join(repoRoot, "cli/main.ts"), ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: emptyHome(), ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin!.end(stdin ?? "");
  const exited = new Promise<CliResult>((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

export const cli = (args: string[], env: Record<string, string>, stdin?: string) => startCli(args, env, stdin).exited;

/**
 * The same under a pseudo-terminal (util-linux `script`): stdout is a TTY, as in a user's shell. `script` merges
 * stderr into its output and ends lines with \r\n.
 */
export function cliOnTerminal(args: string[], env: Record<string, string>): Promise<CliResult> {
  const command = [process.execPath, join(repoRoot, "cli/main.ts"), ...args].map(shellQuote).join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    env: { PATH: process.env.PATH ?? "", HOME: emptyHome(), TERM: "xterm-256color", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

const shellQuote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/** Resolves once `read()` matches `pattern` (a CLI's output so far), or rejects after `timeoutMs`. */
export async function outputMatching(
  read: () => string,
  pattern: RegExp,
  timeoutMs = 25_000,
): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = read().match(pattern);
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`no ${pattern} in the output within ${timeoutMs} ms:\n${read()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
