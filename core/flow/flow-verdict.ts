import { llmConfig, type Crew, type LlmConfig } from "../crew.ts";
import { setCondition } from "../conditions.ts";
import type { Condition } from "../crew.ts";
import { schemaProblems } from "../schema-problems.ts";
import { hostPattern } from "../tools.ts";
import { truncate } from "../truncate.ts";
import { isStart, type AtomicAction, type FlowDefinition } from "./definition.ts";
import { declaredCrews, type DeclaredCrew } from "./declared-crews.ts";
import { ANNOTATION_FLOW_ALLOWED_HOSTS, ANNOTATION_FLOW_LLM, type FlowStatus } from "./flow-resources.ts";
import { atomicActions, callsToolsOnly, methodCrews } from "./method-crews.ts";
import { judgeFlow } from "./problems.ts";
import { flowInputs } from "./state-inputs.ts";

/**
 * A Flow resource judged whole, as the flow reconciler reports it in its Ready condition: the document (definition.ts,
 * problems.ts), the actions the cluster does not run, the model its agent and crew methods use (the
 * `kubecrew.io/llm` annotation where a method names none), the Crews those methods run, and the Crews of the
 * namespace its `from_declaration` crews name (core/flow/declared-crews.ts: whether they exist is the reconciler's
 * to see).
 */
export type FlowVerdict =
  { ok: true; definition: FlowDefinition; crews: Crew[]; declared: DeclaredCrew[] } | { ok: false; problems: string[] };

/** Why the cluster does not run an action, or undefined when it does. */
export function unsupportedInCluster(action: AtomicAction, at: string): string | undefined {
  if (action.call === "script" || action.call === "code") {
    return `${at}: call: ${action.call} runs Python, which only the crewai runtime runs; flows run on the kubecrew runtime`;
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
  const declared = declaredCrews(judged.definition);
  for (const d of declared) {
    if (!d.crew) problems.push(`${d.at}.from_declaration: "${d.path}" names no Crew (no DNS label can be made of it)`);
  }
  const llm = annotatedLlm(annotations);
  if (!llm.ok) return { ok: false, problems: [...problems, llm.problem] };
  const hosts = annotatedHosts(annotations);
  if (!hosts.ok) return { ok: false, problems: [...problems, hosts.problem] };
  const crews = methodCrews(name, judged.definition, llm.value as LlmConfig, { allowedHosts: hosts.value });
  if (!crews.ok) return { ok: false, problems: [...problems, ...crews.problems] };
  for (const crew of crews.crews) {
    const named = crew.spec.llm || crew.spec.agents.every((a) => a.llm) || callsToolsOnly(crew);
    if (!named) {
      problems.push(
        `crew ${crew.metadata.name}: names no model; give its agents an llm or the Flow the annotation ${ANNOTATION_FLOW_LLM}`,
      );
    }
  }
  return problems.length
    ? { ok: false, problems }
    : { ok: true, definition: judged.definition, crews: crews.crews, declared };
}

/** The hosts the Flow's tool methods' http_request may call: its `kubecrew.io/allowed-hosts` annotation, read. */
export function annotatedHosts(
  annotations: Record<string, string> | undefined,
): { ok: true; value: string[] } | { ok: false; problem: string } {
  const hosts = (annotations?.[ANNOTATION_FLOW_ALLOWED_HOSTS] ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  const bad = hosts.find((h) => !hostPattern.safeParse(h).success);
  if (bad === undefined) return { ok: true, value: hosts };
  return {
    ok: false,
    problem: `metadata.annotations["${ANNOTATION_FLOW_ALLOWED_HOSTS}"]: "${bad}" is not a host name (optionally *.-prefixed and :port-suffixed)`,
  };
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
