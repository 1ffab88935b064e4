import { llmConfig, type Crew, type LlmConfig } from "../crew.ts";
import { setCondition } from "../conditions.ts";
import type { Condition } from "../crew.ts";
import { schemaProblems } from "../schema-problems.ts";
import { truncate } from "../truncate.ts";
import { isStart, type AtomicAction, type FlowDefinition } from "./definition.ts";
import { ANNOTATION_FLOW_LLM, type FlowStatus } from "./flow-resources.ts";
import { atomicActions, methodCrews } from "./method-crews.ts";
import { judgeFlow } from "./problems.ts";
import { flowInputs } from "./state-inputs.ts";

/**
 * A Flow resource judged whole, as the flow reconciler reports it in its Ready condition: the document (definition.ts,
 * problems.ts), the actions the cluster does not run, the model its agent and crew methods use (the
 * `kubecrew.io/llm` annotation where a method names none), and the Crews those methods run.
 */
export type FlowVerdict = { ok: true; definition: FlowDefinition; crews: Crew[] } | { ok: false; problems: string[] };

/** Why the cluster does not run an action, or undefined when it does. */
export function unsupportedInCluster(action: AtomicAction, at: string): string | undefined {
  if (action.call === "script" || action.call === "code") {
    return `${at}: call: ${action.call} runs Python, which only the crewai runtime runs; flows run on the kubecrew runtime`;
  }
  if (action.call === "tool") {
    return `${at}: call: tool (${action.ref}) is not run yet; give the tool to an agent (call: agent with tools)`;
  }
  if (action.call === "crew" && action.from_declaration) {
    return `${at}: call: crew with from_declaration is not run yet; put the crew inline (with)`;
  }
  return undefined;
}

export function judgeFlowResource(
  name: string,
  spec: unknown,
  annotations: Record<string, string> | undefined,
): FlowVerdict {
  const judged = judgeFlow(spec);
  if (!judged.ok) return judged;
  const problems = atomicActions(judged.definition).flatMap(({ place, action }) => {
    const message = unsupportedInCluster(action, `methods.${place.method}${place.step ? `.do.${place.step}` : ""}.do`);
    return message ? [message] : [];
  });
  const llm = annotatedLlm(annotations);
  if (!llm.ok) return { ok: false, problems: [...problems, llm.problem] };
  const crews = methodCrews(name, judged.definition, llm.value as LlmConfig);
  if (!crews.ok) return { ok: false, problems: [...problems, ...crews.problems] };
  for (const crew of crews.crews) {
    const named = crew.spec.llm || crew.spec.agents.every((a) => a.llm);
    if (!named) {
      problems.push(
        `crew ${crew.metadata.name}: names no model; give its agents an llm or the Flow the annotation ${ANNOTATION_FLOW_LLM}`,
      );
    }
  }
  return problems.length ? { ok: false, problems } : { ok: true, definition: judged.definition, crews: crews.crews };
}

/** The Flow's model for methods that name none: its `kubecrew.io/llm` annotation, read. */
export function annotatedLlm(
  annotations: Record<string, string> | undefined,
): { ok: true; value: LlmConfig | undefined } | { ok: false; problem: string } {
  const text = annotations?.[ANNOTATION_FLOW_LLM];
  if (text === undefined) return { ok: true, value: undefined };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: `metadata.annotations["${ANNOTATION_FLOW_LLM}"]: not JSON` };
  }
  const parsed = llmConfig.safeParse(value);
  if (!parsed.success) {
    const detail = schemaProblems(parsed.error).join("; ");
    return { ok: false, problem: `metadata.annotations["${ANNOTATION_FLOW_LLM}"]: ${detail}` };
  }
  return { ok: true, value: parsed.data };
}

/** The Flow's status: Ready True with what it holds, or Ready False naming every problem. */
export function desiredFlowStatus(
  verdict: FlowVerdict,
  previous: FlowStatus | undefined,
  generation: number | undefined,
  now: string,
): FlowStatus {
  const observed = generation !== undefined ? { observedGeneration: generation } : {};
  const ready = (next: Omit<Condition, "lastTransitionTime">) =>
    setCondition(previous?.conditions, { ...next, ...observed }, now);
  if (!verdict.ok) {
    return {
      ...observed,
      conditions: ready({
        type: "Ready",
        status: "False",
        reason: "InvalidSpec",
        message: truncate(verdict.problems.join("; ")),
      }),
    };
  }
  const methods = Object.entries(verdict.definition.methods);
  return {
    ...observed,
    methodCount: methods.length,
    startMethods: methods.filter(([, m]) => isStart(m)).map(([n]) => n),
    inputs: flowInputs(verdict.definition),
    crews: verdict.crews.map((c) => c.metadata.name),
    conditions: ready({
      type: "Ready",
      status: "True",
      reason: "Valid",
      message: `${methods.length} methods, ${verdict.crews.length} crews`,
    }),
  };
}
