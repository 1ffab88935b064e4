import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { rm } from "node:fs/promises";
import { createInterface } from "node:readline";
import { z } from "zod";
import type { Logger } from "../core/logger.ts";
import { silentLogger } from "../core/logger.ts";
import type { Resolver } from "../platform/outbound/outbound-fetch.ts";
import type { OutboundPolicy } from "../core/outbound/policy.ts";
import { TRACEPARENT_ENV } from "../platform/telemetry/trace-context.ts";
import {
  MAX_TASK_OUTPUT_BYTES,
  taskOutcome,
  type TaskAssignment,
  type TaskOutcome,
  type TokenUsage,
} from "../core/task-assignment.ts";
import { taskStep, type TaskStep } from "../core/task-step.ts";
import { appsMcpServer, type AppsSettings } from "./apps-source.ts";
import { adapterEnv, makeAdapterHome, proxyEnv, spawnAdapter, takeEarlyAdapter } from "./crewai-adapter-start.ts";
import { REFUSED_PREFIX, startEgressProxy } from "./egress-proxy.ts";
import { apiKeyFor, modelLabel, type Env } from "./llm.ts";
import { mcpHeaders } from "./mcp-headers.ts";
import { StepRecorder, type StepSummary, type StepTask } from "./step-recorder.ts";

/** How long a stopped adapter has between SIGTERM and SIGKILL. */
export const ADAPTER_GRACE_MS = 5_000;

export interface CrewaiRuntimeDeps {
  /** The Python of the CrewAI virtual environment (KUBECREW_CREWAI_PYTHON). */
  python: string;
  /** The runner's environment: API keys and MCP header Secrets are read from it; the child inherits it. */
  env: Env;
  /** Where the child may connect: its every request goes through the egress proxy, which applies this policy. */
  policy: OutboundPolicy;
  attempt?: number;
  apps?: AppsSettings;
  /** Aborts the task (SIGTERM): the child gets SIGTERM, then SIGKILL after `graceMs`. */
  signal?: AbortSignal;
  graceMs?: number;
  logger?: Logger;
  now?: () => number;
  resolver?: Resolver;
  /** Each step as it ends; in a whole project's run with the task it belongs to (the task CrewAI runs now). */
  onStep?: (step: TaskStep, sofar: StepSummary, task?: StepTask) => void;
  /**
   * A whole project's run (assignment.project): each task's outcome, with its steps, as CrewAI reports the task
   * complete. The returned outcome is the last of them (or the failure that ended the run): a task that failed (its
   * output above the limit too) ends the run, as the execution ends with it.
   */
  onTaskOutcome?: (outcome: TaskOutcome) => Promise<void>;
}

const EMPTY_USAGE: TokenUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
/** One line of the adapter's stdout. */
const adapterLine = z.union([
  z.object({ step: taskStep, taskIndex: z.number().int().min(0).optional(), agent: z.string().optional() }),
  z.object({ outcome: taskOutcome }),
]);

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ").trim();

/** An outcome whose output (with CrewAI's json_dict, which is stored beside it) is above the limit, as a failure. */
export function withinOutputLimit(outcome: TaskOutcome): TaskOutcome {
  if (outcome.error !== undefined || outcome.output === undefined) return outcome;
  const jsonDict = outcome.jsonDict;
  const bytes =
    Buffer.byteLength(outcome.output, "utf8") + (jsonDict ? Buffer.byteLength(JSON.stringify(jsonDict), "utf8") : 0);
  if (bytes <= MAX_TASK_OUTPUT_BYTES) return outcome;
  const { output: _output, jsonDict: _jsonDict, ...rest } = outcome;
  return { ...rest, error: `Task output is ${bytes} bytes, above the 1 MiB limit` };
}

/** Replaces each secret in a text (longest first); values under 6 characters are left alone. */
export function redactor(secrets: (string | undefined)[]): (text: string) => string {
  const values = [...new Set(secrets.filter((s): s is string => !!s && s.length >= 6))].sort(
    (a, b) => b.length - a.length,
  );
  return (text) => values.reduce((t, secret) => t.split(secret).join("[redacted]"), text);
}

/**
 * Carries out one task with CrewAI: starts the adapter (`python -m kubecrew_crewai`) with the task, its model and its
 * tool sources on stdin (secrets resolved here, as the TypeScript runner resolves them), records the steps it reports
 * on stdout through the same recorder as runTask, and returns its outcome. Every connection of the child goes through
 * a loopback egress proxy that applies the outbound URL policy. Like runTask it never throws: a failure is the
 * outcome's error.
 */
export async function runCrewaiTask(assignment: TaskAssignment, deps: CrewaiRuntimeDeps): Promise<TaskOutcome> {
  const now = deps.now ?? (() => performance.now());
  const log = (deps.logger ?? silentLogger()).child({ execution: assignment.execution.id, task: assignment.task.name });
  const started = now();
  const seconds = () => Math.round(now() - started) / 1000;
  const llm = assignment.agent.llm;
  const model = llm ? modelLabel(llm) : undefined;
  const recorder = new StepRecorder(deps.onStep);
  // A whole project's run records each task's steps apart (they come tagged with their task and its agent), and hands
  // them on as that task's while it runs.
  const recorders = new Map<number, StepRecorder>();
  const agents = new Map<number, string>();
  const recorderFor = (index: number | undefined) => {
    const project = assignment.project;
    if (!project || index === undefined) return recorder;
    if (!recorders.has(index)) {
      const name = project.tasks.find((t) => t.index === index)?.name ?? `task ${index}`;
      recorders.set(
        index,
        new StepRecorder((step, sofar) => deps.onStep?.(step, sofar, { name, index, agent: agents.get(index) ?? "" })),
      );
    }
    return recorders.get(index)!;
  };
  const reports: Promise<void>[] = [];
  const reported = new Set<number>();
  // A project's run ends at its first failed task: the execution fails with it, and what CrewAI would do next is moot.
  const failedTask = new AbortController();
  let last: TaskOutcome | undefined;
  let failure: TaskOutcome | undefined;
  // A connection the egress proxy refused reaches CrewAI's clients as a bare 403 (an MCP client takes it for bad
  // credentials): a failure that names a 403 but not the policy gets the policy's message (set once the proxy runs).
  let explained = (error: string) => error;
  const taskEnded = (outcome: TaskOutcome) => {
    reported.add(outcome.taskIndex);
    const error = outcome.error !== undefined ? { error: explained(outcome.error) } : {};
    const whole = withinOutputLimit({ ...outcome, ...error, ...recorderFor(outcome.taskIndex).summary() });
    last = whole;
    if (assignment.project && deps.onTaskOutcome) reports.push(deps.onTaskOutcome(whole));
    if (assignment.project && whole.error !== undefined && !failure) {
      failure = whole;
      failedTask.abort(new Error(whole.error));
    }
    return whole;
  };
  const base = {
    taskName: assignment.task.name,
    taskIndex: assignment.task.index,
    agent: assignment.agent.role,
    attempt: deps.attempt ?? 1,
  };
  const ended = (fields: {
    output?: string;
    jsonDict?: TaskOutcome["jsonDict"];
    error?: string;
    tokenUsage?: TokenUsage;
  }): TaskOutcome => ({
    ...base,
    ...fields,
    executionTime: seconds(),
    tokenUsage: fields.tokenUsage ?? EMPTY_USAGE,
    ...(model ? { model } : {}),
    ...recorder.summary(),
  });
  if (!llm) {
    await dropEarlyAdapter(deps.python);
    return ended({
      error: `Agent "${assignment.agent.name}" has no LLM configured (set the crew's llm or the agent's llm)`,
    });
  }

  let launch: Record<string, unknown>;
  let secrets: string[];
  try {
    const servers = await launchServers(assignment.agent, assignment.tools, deps);
    const apiKey = apiKeyFor(llm, deps.env);
    // A crew CrewAI runs whole from its spec (core/whole-project.ts) has every agent in the pod: each one's key, and
    // each one's MCP servers and connected apps (by agent name), as a task's are resolved for its one agent.
    const crewAgents = assignment.project?.declared ? (assignment.coworkers ?? []) : [];
    const agentKeys = Object.fromEntries(
      crewAgents.flatMap(({ agent }) => {
        const key = agent.llm ? apiKeyFor(agent.llm, deps.env) : undefined;
        return key ? [[agent.name, key]] : [];
      }),
    );
    const agentMcpServers: Record<string, LaunchServer[]> = {};
    for (const { agent, tools } of crewAgents) agentMcpServers[agent.name] = await launchServers(agent, tools, deps);
    const everyServer = [...servers, ...Object.values(agentMcpServers).flat()];
    // A server's URL may carry a key in its query (CrewAI's console prints URLs whole).
    const queries = everyServer.map((s) => new URL(s.url).search.slice(1));
    secrets = [
      apiKey,
      ...Object.values(agentKeys),
      ...everyServer.flatMap((s) => Object.values(s.headers)),
      ...queries,
    ].filter((s): s is string => !!s);
    launch = {
      assignment,
      attempt: base.attempt,
      modelLabel: model,
      llm: { ...llm, ...(apiKey ? { apiKey } : {}) },
      mcpServers: servers,
      secrets,
      ...(assignment.project ? { project: assignment.project } : {}),
      ...(Object.keys(agentKeys).length > 0 ? { agentKeys } : {}),
      ...(crewAgents.length > 0 ? { agentMcpServers } : {}),
    };
  } catch (error) {
    await dropEarlyAdapter(deps.python);
    return ended({ error: oneLine((error as Error).message) });
  }
  const redact = redactor(secrets);

  const proxy = await startEgressProxy(deps.policy, deps.resolver ? { resolver: deps.resolver } : {});
  explained = (error) => {
    const refusal = proxy.refusals().at(-1);
    return refusal && /\b403\b/.test(error) && !error.includes(REFUSED_PREFIX) ? `${error} (${refusal})` : error;
  };
  // The adapter the runner started as it started (crewai-adapter-start.ts), else one started now; either way with a
  // private home (CrewAI keeps its user data there), and the proxy and the task span's traceparent in the launch.
  const early = takeEarlyAdapter(deps.python);
  const home = early?.home ?? makeAdapterHome();
  const traceparent = deps.env[TRACEPARENT_ENV];
  launch.env = { ...proxyEnv(proxy.url), ...(traceparent ? { [TRACEPARENT_ENV]: traceparent } : {}) };
  try {
    log.info({ model, runtime: "crewai", startedEarly: !!early }, "Task started");
    const result = await runAdapter(launch, {
      python: deps.python,
      child: early?.child,
      env: { ...adapterEnv(deps.env, home), ...proxyEnv(proxy.url) },
      redact,
      log,
      signal: deps.signal ? AbortSignal.any([deps.signal, failedTask.signal]) : failedTask.signal,
      graceMs: deps.graceMs ?? ADAPTER_GRACE_MS,
      onStep: (step, taskIndex, agent) => {
        if (taskIndex !== undefined && agent !== undefined) agents.set(taskIndex, agent);
        recorderFor(taskIndex).record(step);
      },
      onOutcome: taskEnded,
    });
    await Promise.all(reports);
    // A project's run: a failure the run did not report is the first unreported task's (the one CrewAI was running).
    const open = assignment.project?.tasks.find((t) => !reported.has(t.index));
    const openTask = open ? { taskName: open.name, taskIndex: open.index, ...recorderFor(open.index).summary() } : {};
    if (assignment.project && last && (failure || !open)) {
      // Each task's outcome was checked and reported as it came: the run's is its first failure, else the last task's.
      log.info({ model, tasks: result.outcomes, executionTime: seconds() }, "Project run ended");
      return failure ?? last;
    }
    if (deps.signal?.aborted) {
      const reason = deps.signal.reason instanceof Error ? deps.signal.reason.message : String(deps.signal.reason);
      log.warn({ model, reason, ...(open ? { task: open.name } : {}) }, "Task interrupted");
      return { ...ended({ error: oneLine(reason) }), ...openTask };
    }
    const outcome = result.outcome;
    if (!outcome || open) {
      const error =
        result.error ??
        (open
          ? "The CrewAI adapter ended before it reported this task"
          : "The CrewAI adapter ended without an outcome");
      log.warn({ model, error }, "Task failed");
      return { ...ended({ error }), ...openTask };
    }
    if (outcome.error !== undefined || outcome.output === undefined) {
      const error = explained(outcome.error ?? "The CrewAI adapter reported neither an output nor an error");
      log.warn({ model, error, refusals: proxy.refusals() }, "Task failed");
      return ended({ error, tokenUsage: outcome.tokenUsage });
    }
    // CrewAI's json_dict (output_json, or the output_pydantic model's JSON) counts against the limit with the output.
    const checked = withinOutputLimit(outcome);
    if (checked.error !== undefined) return ended({ error: checked.error, tokenUsage: outcome.tokenUsage });
    const jsonDict = outcome.jsonDict;
    log.info({ model, tokenUsage: outcome.tokenUsage, executionTime: seconds() }, "Task succeeded");
    return ended({ output: outcome.output, ...(jsonDict ? { jsonDict } : {}), tokenUsage: outcome.tokenUsage });
  } finally {
    await proxy.close();
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * A task that fails before its launch (no model, a header Secret or the apps credential missing) ends the adapter
 * started early for it: waiting for its launch on stdin, it would keep the runner from exiting.
 */
async function dropEarlyAdapter(python: string): Promise<void> {
  const early = takeEarlyAdapter(python);
  if (!early) return;
  early.child.kill("SIGKILL");
  await rm(early.home, { recursive: true, force: true });
}

/** An MCP server as the adapter is given it: its header values resolved (mcp_servers.py). */
interface LaunchServer {
  name: string;
  url: string;
  transport: string;
  headers: Record<string, string>;
  tools?: string[];
  timeoutSeconds: number;
}

/** One agent's MCP servers with its connected apps as one more (apps-source.ts), their headers resolved. */
async function launchServers(
  agent: TaskAssignment["agent"],
  tools: TaskAssignment["tools"],
  deps: CrewaiRuntimeDeps,
): Promise<LaunchServer[]> {
  const apps = await appsMcpServer(agent, deps.apps);
  return [...tools.mcpServers, ...(apps ? [apps] : [])].map((server) => ({
    name: server.name,
    url: server.url,
    transport: server.transport,
    headers: mcpHeaders(server, deps.env),
    ...(server.tools ? { tools: server.tools } : {}),
    timeoutSeconds: server.timeoutSeconds,
  }));
}

interface AdapterResult {
  /** The last outcome line. */
  outcome?: TaskOutcome;
  /** How many outcome lines came (a whole project's run writes one per task). */
  outcomes?: number;
  /** Why there is no outcome. */
  error?: string;
}

/** Runs the adapter to its end: the launch message on stdin, steps and the outcome from stdout, stderr to the log. */
function runAdapter(
  launch: Record<string, unknown>,
  options: {
    python: string;
    /** The adapter, already started; else it is started here with `env`. */
    child?: ChildProcessWithoutNullStreams | undefined;
    env: Record<string, string | undefined>;
    redact: (text: string) => string;
    log: Logger;
    signal?: AbortSignal;
    graceMs: number;
    onStep: (step: Omit<TaskStep, "index">, taskIndex?: number, agent?: string) => void;
    onOutcome?: (outcome: TaskOutcome) => void;
  },
): Promise<AdapterResult> {
  const { redact, log } = options;
  return new Promise((resolve) => {
    const child = options.child ?? spawnAdapter(options.python, options.env);
    let outcome: TaskOutcome | undefined;
    let outcomes = 0;
    let spawnError: Error | undefined;
    let lastLog = "";
    let killTimer: NodeJS.Timeout | undefined;
    const stop = () => {
      child.kill("SIGTERM");
      killTimer = setTimeout(() => child.kill("SIGKILL"), options.graceMs);
    };
    if (options.signal?.aborted) stop();
    options.signal?.addEventListener("abort", stop, { once: true });

    createInterface({ input: child.stdout }).on("line", (line) => {
      let parsed: z.infer<typeof adapterLine> | undefined;
      try {
        parsed = adapterLine.parse(JSON.parse(redact(line)));
      } catch (error) {
        log.warn(
          { line: redact(line).slice(0, 300), err: (error as Error).message },
          "Unreadable line from the CrewAI adapter",
        );
        return;
      }
      if ("step" in parsed) {
        const { index: _index, ...step } = parsed.step;
        options.onStep(step, parsed.taskIndex, parsed.agent);
      } else {
        outcome = parsed.outcome;
        outcomes += 1;
        options.onOutcome?.(outcome);
      }
    });
    createInterface({ input: child.stderr }).on("line", (line) => {
      // CrewAI's console draws boxes around its messages: their edges and blank lines are left out of the log.
      const text = redact(line)
        .replace(/^[\s│]+|[\s│]+$/g, "")
        .trim();
      if (!text || /^[╭╰─╮╯\s]*$/.test(text)) return;
      lastLog = text;
      log.info({ crewai: text }, "CrewAI adapter");
    });
    child.once("error", (error) => (spawnError = error));
    child.stdin.on("error", () => undefined); // an adapter that exits at once closes its stdin early
    child.stdin.end(JSON.stringify(launch));
    child.once("close", (code, signal) => {
      clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", stop);
      if (outcome) return resolve({ outcome, outcomes });
      if (spawnError) {
        return resolve({
          error: `Cannot start the CrewAI runtime's Python (${options.python}): ${spawnError.message}; set KUBECREW_CREWAI_PYTHON to the Python of its virtual environment (hack/crewai-venv.sh path)`,
        });
      }
      const missing = /No module named '?(kubecrew_crewai|crewai)/.exec(lastLog);
      if (missing) {
        return resolve({
          error: `${options.python} has no ${missing[1]} module: set KUBECREW_CREWAI_PYTHON to the Python of the CrewAI virtual environment (hack/crewai-venv.sh path)`,
        });
      }
      const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      resolve({ error: oneLine(`The CrewAI adapter ${how} without an outcome${lastLog ? `: ${lastLog}` : ""}`) });
    });
  });
}
