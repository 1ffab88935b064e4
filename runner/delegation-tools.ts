import { tool, type ToolSet } from "ai";
import { z } from "zod";
import type { Agent } from "../core/crew.ts";
import type { TaskTools } from "../core/task-tools.ts";
import { truncateForModel } from "./tool-limits.ts";

/**
 * The tools a hierarchical crew's manager (or an agent with `allowDelegation`) works through, as CrewAI's manager
 * does, in kubecrew's own words: hand a piece of work to a coworker, or ask a coworker a question. Either runs the
 * coworker's own agent loop in this process (runner/coworker.ts) and returns its answer as the tool's result; each one
 * is a `delegation` step.
 */

export const DELEGATE_WORK_TOOL = "delegate_work";
export const ASK_COWORKER_TOOL = "ask_coworker";

/** A coworker as the assignment carries it: the agent (model filled in) and its tool sources. */
export interface Coworker {
  agent: Agent;
  tools: TaskTools;
}

/** What a coworker is handed: work to do or a question to answer, with what it needs to know. */
export interface DelegatedRequest {
  kind: "work" | "question";
  text: string;
  context: string;
}

/** One delegation as it ended: the material of a `delegation` step. */
export interface DelegationRecord {
  tool: string;
  coworker: string;
  request: string;
  answer?: string;
  error?: string;
  startedAt: Date;
  durationMs: number;
}

export interface DelegationDeps {
  /** Runs the coworker on the request and returns its answer (throws when it gives none). */
  runCoworker: (coworker: Coworker, request: DelegatedRequest, signal?: AbortSignal) => Promise<string>;
  onDelegation?: (record: DelegationRecord) => void;
  signal?: AbortSignal;
  now?: () => number;
}

/** The coworker a role names, forgiving case and spacing as a model may vary them. */
export function findCoworker(coworkers: readonly Coworker[], role: string): Coworker | undefined {
  const norm = (s: string) => s.trim().replace(/\s+/g, " ").toLowerCase();
  return coworkers.find((c) => norm(c.agent.role) === norm(role));
}

function roster(coworkers: readonly Coworker[]): string {
  return coworkers.map((c) => `- ${c.agent.role}: ${c.agent.goal}`).join("\n");
}

/** The two delegation tools over `coworkers`; none when there is no one to delegate to. */
export function delegationTools(coworkers: readonly Coworker[], deps: DelegationDeps): ToolSet {
  if (coworkers.length === 0) return {};
  const now = deps.now ?? (() => performance.now());
  const roles = [...new Set(coworkers.map((c) => c.agent.role))] as [string, ...string[]];
  const coworker = z.enum(roles).describe("The role of the coworker, exactly as listed");
  const context = z
    .string()
    .describe("Everything the coworker needs to know to do it: they know nothing of your task or of the crew's work");

  const run =
    (name: string, kind: DelegatedRequest["kind"]) =>
    async (role: string, text: string, given: string, signal?: AbortSignal): Promise<string> => {
      const startedAt = new Date();
      const started = now();
      const found = findCoworker(coworkers, role);
      let answer: string | undefined;
      let error: string | undefined;
      try {
        if (!found) throw new Error(`No coworker has the role "${role}"; choose one of: ${roles.join(", ")}`);
        answer = await deps.runCoworker(found, { kind, text, context: given }, signal ?? deps.signal);
      } catch (err) {
        if ((signal ?? deps.signal)?.aborted) throw err;
        error = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, " ");
      }
      deps.onDelegation?.({
        tool: name,
        coworker: found?.agent.role ?? role,
        request: text,
        ...(answer !== undefined ? { answer } : {}),
        ...(error !== undefined ? { error } : {}),
        startedAt,
        durationMs: Math.round(now() - started),
      });
      return truncateForModel(answer ?? `The delegation failed: ${error}`);
    };

  const delegate = run(DELEGATE_WORK_TOOL, "work");
  const ask = run(ASK_COWORKER_TOOL, "question");
  return {
    [DELEGATE_WORK_TOOL]: tool({
      description:
        "Hand one piece of work to a coworker, who does it and gives you the result. Describe the work fully and " +
        `give all the context it needs. Your coworkers:\n${roster(coworkers)}`,
      inputSchema: z.object({
        coworker,
        task: z.string().min(1).describe("The work to do, and what the result must be"),
        context,
      }),
      execute: (input, options) => delegate(input.coworker, input.task, input.context, options.abortSignal),
    }),
    [ASK_COWORKER_TOOL]: tool({
      description:
        "Ask a coworker a question and get their answer. Give all the context the question needs. " +
        `Your coworkers:\n${roster(coworkers)}`,
      inputSchema: z.object({
        coworker,
        question: z.string().min(1).describe("What you want to know"),
        context,
      }),
      execute: (input, options) => ask(input.coworker, input.question, input.context, options.abortSignal),
    }),
  };
}
