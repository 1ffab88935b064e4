import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The crewai runtime's adapter process (`<python> -m kubecrew_crewai`, crewai-adapter/) and its start at the runner's
 * own start. `import crewai` takes seconds, and so does the runner's loading of its modules: the adapter loads CrewAI
 * before it reads its launch message (crewai-adapter/kubecrew_crewai/startup.py), so a runner that starts it first
 * (cli/main.ts, before it loads the runner's modules) has the two overlap. This file imports nothing else for that.
 */

/** The adapter's module: `<python> -m kubecrew_crewai` (crewai-adapter/). */
export const ADAPTER_MODULE = "kubecrew_crewai";

/** CrewAI's telemetry and traces off, for the child and anything it starts. */
const QUIET_ENV = {
  CREWAI_DISABLE_TELEMETRY: "true",
  CREWAI_DISABLE_TRACKING: "true",
  CREWAI_TRACING_ENABLED: "false",
  // Not OTEL_SDK_DISABLED: the operator's (or none) reaches the adapter, which traces with kubecrew's own provider
  // (crewai-adapter/kubecrew_crewai/tracing.py) and then sets it for everything CrewAI makes.
};

/** The egress proxy's variables: every connection of the adapter goes through `proxyUrl` (none until it is known). */
export function proxyEnv(proxyUrl: string): Record<string, string> {
  return {
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    http_proxy: proxyUrl,
    https_proxy: proxyUrl,
    ALL_PROXY: "",
    all_proxy: "",
    NO_PROXY: "",
    no_proxy: "",
  };
}

/** The adapter's environment: the runner's, CrewAI kept quiet, a private home (CrewAI keeps user data under it). */
export function adapterEnv(base: Record<string, string | undefined>, home: string): Record<string, string | undefined> {
  return {
    ...base,
    ...QUIET_ENV,
    HOME: home,
    XDG_DATA_HOME: join(home, ".local/share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_CONFIG_HOME: join(home, ".config"),
    PYTHONUNBUFFERED: "1",
    // The adapter ends at once if this process died before it could ask the kernel to be told (__main__.py).
    KUBECREW_RUNNER_PID: String(process.pid),
  };
}

export function makeAdapterHome(): string {
  return mkdtempSync(join(tmpdir(), "kubecrew-crewai-"));
}

export function spawnAdapter(python: string, env: Record<string, string | undefined>): ChildProcessWithoutNullStreams {
  return spawn(python, ["-m", ADAPTER_MODULE], { env, stdio: ["pipe", "pipe", "pipe"] });
}

export interface StartedAdapter {
  child: ChildProcessWithoutNullStreams;
  home: string;
}

let early: (StartedAdapter & { python: string; failed: boolean }) | undefined;

/** The `--assignment` file of a `kubecrew runner` command line. */
function assignmentFile(argv: string[]): string | undefined {
  const at = argv.indexOf("--assignment");
  if (at >= 0) return argv[at + 1];
  return argv.find((a) => a.startsWith("--assignment="))?.slice("--assignment=".length);
}

/**
 * At the start of `kubecrew runner`: when its assignment is a `runtime: crewai` task and KUBECREW_CREWAI_PYTHON is set,
 * starts the adapter now, without the egress proxy's address (the launch message carries it). Anything unexpected
 * (no file, not JSON) leaves it to the task to start the adapter, and to report what is wrong.
 */
export function startAdapterEarly(argv: string[], env: NodeJS.ProcessEnv): void {
  const python = env.KUBECREW_CREWAI_PYTHON;
  const file = assignmentFile(argv);
  if (!python || !file) return;
  try {
    if ((JSON.parse(readFileSync(file, "utf8")) as { runtime?: unknown } | null)?.runtime !== "crewai") return;
  } catch {
    return;
  }
  const home = makeAdapterHome();
  const blankProxies = Object.fromEntries(Object.keys(proxyEnv("")).map((name) => [name, ""]));
  const started = { child: spawnAdapter(python, { ...adapterEnv(env, home), ...blankProxies }), home, python };
  early = { ...started, failed: false };
  started.child.once("error", () => {
    if (early?.child === started.child) early.failed = true;
  });
  // Never handed over (the runner ended first): nothing of it is left behind.
  process.once("exit", () => {
    if (early?.child !== started.child) return;
    started.child.kill("SIGKILL");
    rmSync(home, { recursive: true, force: true });
  });
}

/** The adapter started early for `python`, still running and not yet taken; the caller owns it (and its home). */
export function takeEarlyAdapter(python: string): StartedAdapter | undefined {
  const taken = early;
  early = undefined;
  if (!taken) return undefined;
  const { child, home } = taken;
  if (taken.python === python && !taken.failed && child.exitCode === null && child.signalCode === null) {
    return { child, home };
  }
  child.kill("SIGKILL");
  rmSync(home, { recursive: true, force: true });
  return undefined;
}
