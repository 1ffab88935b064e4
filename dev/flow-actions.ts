import { context } from "@opentelemetry/api";
import type { Crew } from "../core/crew.ts";
import { evaluateCel, renderTemplate, type CelContext } from "../core/flow/cel.ts";
import type { AtomicAction, EachAction, FlowDefinition } from "../core/flow/definition.ts";
import { AGENT_INPUT, methodCrewName, type ActionPlace } from "../core/flow/method-crews.ts";
import { outputText } from "../core/flow/outcomes.ts";
import { isFinished, type Requester } from "../core/execution.ts";
import type { Json } from "../core/json.ts";
import { statusResponse } from "../core/status-view.ts";
import { contextFromTraceparent } from "../platform/telemetry/trace-context.ts";
import type { LocalExecutions } from "./local-executions.ts";
import { KubecrewError } from "../core/errors.ts";

/** A method's action that kubecrew's runtime does not run (Python: `script`, `code`). */
export class UnsupportedAction extends KubecrewError {
  readonly code = "unsupported_action";
}

export function unsupportedActionMessage(action: AtomicAction, at: string): string | undefined {
  if (action.call === "script" || action.call === "code") {
    return `${at}: call: ${action.call} runs Python, which only the crewai runtime runs; kubecrew dev runs flows on the kubecrew runtime`;
  }
  return undefined;
}

export interface ActionDeps {
  flow: string;
  definition: FlowDefinition;
  executions: LocalExecutions;
  crews: Map<string, Crew>;
  now: Date;
  /** Each child execution started, so a stop reaches it. */
  onChild(id: string): void;
  /** Items of an `each` running at once. */
  eachConcurrency: number;
  signal: AbortSignal;
  /** The kickoff's requester, handed to each child execution (whose user's apps it acts with). */
  requestedBy?: Requester;
  /** The run span's traceparent: each child execution's span is started under it. */
  traceparent?: string;
}

/** What one method's action answers: its output as the flow keeps it in `outputs.<method>`, and on what it ran. */
export interface ActionResult {
  output: Json;
  onMock: boolean;
}

export async function runMethodAction(deps: ActionDeps, method: string, context: CelContext): Promise<ActionResult> {
  const action = deps.definition.methods[method]!.do;
  if (action.call === "each") return { output: await runEach(deps, method, action, context), onMock: false };
  return runAtomic(deps, { method }, action, context);
}

async function runEach(deps: ActionDeps, method: string, action: EachAction, context: CelContext): Promise<Json> {
  const items = evaluateCel(action.in, context, deps.now);
  if (!Array.isArray(items)) throw new Error(`methods.${method}.do.in must give a list, not ${JSON.stringify(items)}`);
  const results: Json[] = new Array<Json>(items.length).fill(null);
  let next = 0;
  const worker = async () => {
    while (next < items.length && !deps.signal.aborted) {
      const index = next++;
      const local: Record<string, Json> = {};
      let last: Json = null;
      for (const step of action.do) {
        const stepContext = { ...context, item: items[index], outputs: { ...(context.outputs as object), ...local } };
        if (step.if) {
          const pass = evaluateCel(step.if, stepContext, deps.now);
          if (typeof pass !== "boolean")
            throw new Error(`methods.${method}: step ${step.name}'s if must give a boolean`);
          if (!pass) continue;
        }
        last = (await runAtomic(deps, { method, step: step.name }, step.action, stepContext)).output;
        local[step.name] = last;
      }
      results[index] = last;
    }
  };
  await Promise.all(Array.from({ length: Math.min(deps.eachConcurrency, items.length) }, worker));
  return results;
}

async function runAtomic(
  deps: ActionDeps,
  place: ActionPlace,
  action: AtomicAction,
  context: CelContext,
): Promise<ActionResult> {
  const unsupported = unsupportedActionMessage(action, `methods.${place.method}.do`);
  if (unsupported) throw new UnsupportedAction(unsupported);
  switch (action.call) {
    case "expression":
      return { output: evaluateCel(action.expr, context, deps.now), onMock: false };
    case "agent": {
      const input = renderTemplate(action.with.input ?? "", context, deps.now);
      const run = await runChild(deps, place, {
        [AGENT_INPUT]: typeof input === "string" ? input : JSON.stringify(input),
      });
      const task = run.tasks[0];
      return {
        output: {
          raw: run.output,
          ...(task?.json_dict ? { json_dict: task.json_dict } : {}),
          agent_role: task?.agent ?? "",
        },
        onMock: run.onMock,
      };
    }
    case "crew": {
      const inputs = renderTemplate({ ...(action.with?.inputs ?? {}), ...(action.inputs ?? {}) }, context, deps.now);
      const run = await runChild(deps, place, inputs as Record<string, Json>);
      const last = run.tasks.at(-1);
      return {
        output: {
          raw: run.output,
          ...(last?.json_dict ? { json_dict: last.json_dict } : {}),
          tasks_output: run.tasks.map((t) => ({ name: t.task_id, raw: t.output, agent: t.agent })),
        },
        onMock: run.onMock,
      };
    }
    case "tool": {
      // CrewAI's tool action answers with the tool's result as it is: here its text.
      const args = renderTemplate(action.with ?? {}, context, deps.now);
      const run = await runChild(deps, place, { [AGENT_INPUT]: JSON.stringify(args) });
      return { output: run.output, onMock: false };
    }
    default:
      throw new UnsupportedAction(`methods.${place.method}.do: call: ${action.call} is not supported`);
  }
}

interface ChildRun {
  output: string;
  tasks: { task_id: string; output: string; agent: string; json_dict?: Json }[];
  onMock: boolean;
}

/** The method's crew as a child execution; answers when it has ended (a failure or stop is an error). */
async function runChild(deps: ActionDeps, place: ActionPlace, inputs: Record<string, Json>): Promise<ChildRun> {
  const crewName = methodCrewName(deps.flow, place);
  const crew = deps.crews.get(crewName);
  if (!crew) throw new Error(`no crew for methods.${place.method}`);
  const spec = {
    crewRef: { name: crewName },
    inputs: stringInputs(inputs),
    stop: false,
    ...(deps.requestedBy ? { requestedBy: deps.requestedBy } : {}),
  };
  // Under the run's trace whatever started this method (a kickoff, a resume, a timer): one trace per flow run.
  const create = () => deps.executions.createExecution({ crew: crewName, spec });
  const { id } = await (deps.traceparent ? context.with(contextFromTraceparent(deps.traceparent), create) : create());
  deps.onChild(id);
  for (;;) {
    const view = await deps.executions.getExecution(crewName, id);
    if (view?.status && isFinished(view.status.phase)) {
      const spec = view.status.crewSpec ?? crew.spec;
      const answer = statusResponse(view.status, view.results, spec.tasks[0]!.name, spec.tasks.length);
      if (answer.status === "error") throw new Error(`methods.${place.method}: ${answer.error}`);
      if (answer.status !== "completed") continue;
      const onMock = (crew.spec.agents[0]?.llm?.provider ?? crew.spec.llm?.provider) === "mock";
      return { output: answer.result.output, tasks: answer.result.tasks as ChildRun["tasks"], onMock };
    }
    if (deps.signal.aborted) await deps.executions.stopExecution(crewName, id);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A crew's inputs fill `{placeholders}` as text: other values are written as JSON, as CrewAI interpolates them. */
function stringInputs(inputs: Record<string, Json>): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(inputs).map(([k, v]) => [
      k,
      typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : outputText(v),
    ]),
  );
}
