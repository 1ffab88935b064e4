import { API_VERSION } from "../core/api-group.ts";
import { isFinished, type Requester } from "../core/execution.ts";
import { evaluateCel, renderTemplate, type CelContext } from "../core/flow/cel.ts";
import type { AtomicAction, EachAction, FlowDefinition } from "../core/flow/definition.ts";
import { declaredCrewName } from "../core/flow/declared-crews.ts";
import { AGENT_INPUT, methodCrewName, type ActionPlace } from "../core/flow/method-crews.ts";
import { outputText } from "../core/flow/outcomes.ts";
import { resolveInputs } from "../core/inputs.ts";
import type { Json, JsonObject } from "../core/json.ts";
import { statusResponse } from "../core/status-view.ts";
import { isOwnTaskResult, type TaskResultSpec } from "../core/task-result.ts";
import { createIfAbsent } from "../kube/apply.ts";
import { methodExecutionName } from "../kube/flow-names.ts";
import {
  ANNOTATION_TRACEPARENT,
  CREW_EXECUTIONS,
  FLOW_EXECUTIONS,
  LABEL_FLOW_EXECUTION,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  resourcePath,
} from "../kube/resources.ts";
import type { KubeApi, OwnerReference } from "../kube/runtime/client.ts";
import { cacheKey, type Informer } from "../kube/runtime/informer.ts";
import { isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import type { CachedCrew, CachedExecution, CachedTaskResult } from "../kube/typed-objects.ts";

/**
 * One method run of a flow carried out level-based: each look at it computes what it can (CEL in the controller) and
 * makes sure the child executions its crew, agent and tool actions need exist (deterministic names: a look repeated
 * after a restart finds them, never starts a second), answering `pending` until they have all ended. Nothing here
 * writes the method's result: the flow run reconciler records it, once.
 */

export interface MethodWorld {
  client: Pick<KubeApi, "create">;
  executions: Informer<CachedExecution | Undecodable>;
  results: Informer<CachedTaskResult | Undecodable>;
  /** The namespace's Crews: a declared crew's inputs take its defaults, as CrewAI's take the declaration's. */
  crews?: Informer<CachedCrew | Undecodable>;
  /** Items of one `each` running at once. */
  eachConcurrency: number;
}

/** The flow run a method belongs to. */
export interface RunRef {
  namespace: string;
  name: string;
  uid: string;
  flow: string;
  requestedBy?: Requester;
  /** The kickoff's time: CEL's now() for the whole run. */
  startTime: Date;
  /** The run span's W3C traceparent (flow-run-trace.ts): the child executions' spans go under it. */
  traceparent?: string;
}

export type MethodProgress =
  | { state: "pending"; started: boolean }
  | { state: "done"; output: Json; onMock: boolean; agent: string }
  | { state: "failed"; error: string };

export function runOwner(run: RunRef): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: FLOW_EXECUTIONS.kind,
    name: run.name,
    uid: run.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export async function advanceMethod(
  world: MethodWorld,
  run: RunRef,
  definition: FlowDefinition,
  activation: string,
  method: string,
  context: CelContext,
): Promise<MethodProgress> {
  const action = definition.methods[method]!.do;
  try {
    if (action.call === "each") return await advanceEach(world, run, activation, method, action, context);
    return await advanceAtomic(world, run, { method }, activation, undefined, action, context, true);
  } catch (error) {
    return { state: "failed", error: `methods.${method}: ${error instanceof Error ? error.message : String(error)}` };
  }
}

async function advanceEach(
  world: MethodWorld,
  run: RunRef,
  activation: string,
  method: string,
  action: EachAction,
  context: CelContext,
): Promise<MethodProgress> {
  const items = evaluateCel(action.in, context, run.startTime);
  if (!Array.isArray(items)) throw new Error(`do.in must give a list, not ${JSON.stringify(items)}`);
  const outputs: Json[] = [];
  let running = 0;
  let pending = false;
  for (const [index, item] of items.entries()) {
    // Items start in order, at most eachConcurrency of them unfinished at once.
    const mayStart = running < world.eachConcurrency;
    const local: Record<string, Json> = {};
    let last: Json = null;
    let itemState: "done" | "running" | "waiting" = "done";
    for (const step of action.do) {
      const stepContext = { ...context, item, outputs: { ...(context.outputs as object), ...local } };
      if (step.if) {
        const pass = evaluateCel(step.if, stepContext, run.startTime);
        if (typeof pass !== "boolean") throw new Error(`step ${step.name}'s if must give a boolean`);
        if (!pass) continue;
      }
      const place = { method, step: step.name };
      const progress = await advanceAtomic(
        world,
        run,
        place,
        activation,
        { index, step: step.name },
        step.action,
        stepContext,
        mayStart,
      );
      if (progress.state === "failed") return progress;
      if (progress.state === "pending") {
        itemState = progress.started ? "running" : "waiting";
        break;
      }
      last = progress.output;
      local[step.name] = last;
    }
    if (itemState === "running") running++;
    if (itemState !== "done") pending = true;
    outputs.push(last);
  }
  return pending
    ? { state: "pending", started: running > 0 }
    : { state: "done", output: outputs, onMock: false, agent: "" };
}

async function advanceAtomic(
  world: MethodWorld,
  run: RunRef,
  place: ActionPlace,
  activation: string,
  item: { index: number; step: string } | undefined,
  action: AtomicAction,
  context: CelContext,
  mayStart: boolean,
): Promise<MethodProgress> {
  if (action.call === "expression") {
    return { state: "done", output: evaluateCel(action.expr, context, run.startTime), onMock: false, agent: "" };
  }
  if (action.call === "agent") {
    const inputs = () => {
      const input = renderTemplate(action.with.input ?? "", context, run.startTime);
      return { [AGENT_INPUT]: typeof input === "string" ? input : JSON.stringify(input) };
    };
    const crew = () => methodCrewName(run.flow, place);
    const child = await childRun(world, run, crew, methodExecutionName(run.name, activation, item), inputs, mayStart);
    if (child.state !== "done") return child;
    const task = child.tasks[0];
    return {
      state: "done",
      output: { raw: child.output, ...(task?.json_dict ? { json_dict: task.json_dict } : {}), agent_role: child.agent },
      onMock: child.onMock,
      agent: child.agent,
    };
  }
  if (action.call === "tool") {
    // CrewAI's tool action answers with the tool's result as it is: here its text.
    const inputs = () => ({ [AGENT_INPUT]: JSON.stringify(renderTemplate(action.with ?? {}, context, run.startTime)) });
    const crew = () => methodCrewName(run.flow, place);
    const child = await childRun(world, run, crew, methodExecutionName(run.name, activation, item), inputs, mayStart);
    if (child.state !== "done") return child;
    return { state: "done", output: child.output, onMock: false, agent: child.agent };
  }
  if (action.call === "crew") {
    const name = methodExecutionName(run.name, activation, item);
    // A crew from a declaration is the Crew of the namespace its path names (the Flow is Ready only when it exists).
    const crew = () =>
      action.from_declaration ? (declaredCrewName(action.from_declaration) ?? "") : methodCrewName(run.flow, place);
    const inputs = () => {
      const rendered = renderTemplate(
        { ...(action.with?.inputs ?? {}), ...(action.inputs ?? {}) },
        context,
        run.startTime,
      );
      const declared = action.from_declaration ? world.crews?.get(run.namespace, crew()) : undefined;
      if (!declared || isUndecodable(declared)) return rendered as Record<string, Json>;
      const resolved = resolveInputs(declared.spec, rendered as JsonObject);
      if (!resolved.ok) throw new Error(`the Crew "${crew()}" needs the inputs ${resolved.missing.join(", ")}`);
      return resolved.inputs as Record<string, Json>;
    };
    const child = await childRun(world, run, crew, name, inputs, mayStart);
    if (child.state !== "done") return child;
    const last = child.tasks.at(-1);
    return {
      state: "done",
      output: {
        raw: child.output,
        ...(last?.json_dict ? { json_dict: last.json_dict } : {}),
        tasks_output: child.tasks.map((t) => ({ name: t.task_id, raw: t.output, agent: t.agent })),
      },
      onMock: child.onMock,
      agent: child.agent,
    };
  }
  // The Flow's Ready condition refuses the rest; a run snapshot taken before that refusal still ends clearly.
  throw new Error(`call: ${action.call} is not run on the cluster`);
}

interface ChildTask {
  task_id: string;
  output: string;
  agent: string;
  json_dict?: Json;
}

type ChildProgress =
  | { state: "pending"; started: boolean }
  | { state: "failed"; error: string }
  | { state: "done"; output: string; tasks: ChildTask[]; onMock: boolean; agent: string };

/**
 * The method's crew as a child CrewExecution: created when absent (and allowed to start), read when it has ended. Its
 * crew's name and inputs are computed only to create it: a look at an `each` renders no mapping (and checks no crew
 * name) for the items it already started.
 */
async function childRun(
  world: MethodWorld,
  run: RunRef,
  crewName: () => string,
  name: string,
  inputs: () => Record<string, Json>,
  mayStart: boolean,
): Promise<ChildProgress> {
  const child = world.executions.get(run.namespace, name);
  if (!child) {
    if (!mayStart) return { state: "pending", started: false };
    const created = await createIfAbsent(world.client, resourcePath(CREW_EXECUTIONS, run.namespace), {
      apiVersion: API_VERSION,
      kind: "CrewExecution",
      metadata: {
        name,
        namespace: run.namespace,
        labels: { [LABEL_FLOW_EXECUTION]: run.name, [LABEL_MANAGED_BY]: MANAGED_BY },
        ownerReferences: [runOwner(run)],
        ...(run.traceparent ? { annotations: { [ANNOTATION_TRACEPARENT]: run.traceparent } } : {}),
      },
      spec: {
        crewRef: { name: crewName() },
        inputs: textInputs(inputs()),
        ...(run.requestedBy ? { requestedBy: run.requestedBy } : {}),
      },
    });
    if (created) world.executions.upsert(created);
    return { state: "pending", started: true };
  }
  if (isUndecodable(child)) return { state: "failed", error: `its execution ${name} cannot be read` };
  const ended = endedChildren.get(child);
  if (ended) return ended;
  const answer = childAnswer(world, run, name, child);
  if (answer.state !== "pending") endedChildren.set(child, answer);
  return answer;
}

/**
 * What an ended child answered, by the cached object it was read from (a change to the child is a new object): a
 * look at an `each` goes over every item, and reads each ended item's results again otherwise — for 50 items, 50
 * answers on each of the ~200 looks an `each` gets.
 */
const endedChildren = new WeakMap<CachedExecution, ChildProgress>();

function childAnswer(world: MethodWorld, run: RunRef, name: string, child: CachedExecution): ChildProgress {
  const status = child.status;
  if (!status || !isFinished(status.phase)) return { state: "pending", started: true };
  const crew = status.crewSpec;
  const results: Record<string, TaskResultSpec[]> = {};
  for (const result of world.results.byIndex(cacheKey(run.namespace, name))) {
    if (isUndecodable(result) || (crew && !isOwnTaskResult(crew, result.spec))) continue;
    (results[result.spec.taskName] ??= []).push(result.spec);
  }
  const answer = statusResponse(status, results, crew?.tasks[0]?.name ?? "", crew?.tasks.length ?? 0);
  if (answer.status === "error") return { state: "failed", error: answer.error };
  if (answer.status !== "completed") return { state: "pending", started: true };
  const tasks = answer.result.tasks as ChildTask[];
  const provider = crew?.agents[0]?.llm?.provider ?? crew?.llm?.provider;
  return {
    state: "done",
    output: answer.result.output,
    tasks,
    onMock: provider === "mock",
    agent: tasks.at(-1)?.agent ?? "",
  };
}

/** A crew's inputs fill `{placeholders}` as text: other values are written as JSON, as CrewAI interpolates them. */
function textInputs(inputs: Record<string, Json>): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(inputs).map(([k, v]) => [
      k,
      typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : outputText(v),
    ]),
  );
}
