import { crewSpec, type CrewStatus, type CrewWebhookSigning } from "./crew.ts";
import { setCondition } from "./conditions.ts";
import { discoverInputs } from "./inputs.ts";
import { truncate } from "./truncate.ts";

/**
 * What a Crew's status should say: Ready True with the inputs it needs and its task count, or Ready False naming
 * every problem (a task naming a missing agent, duplicate names, ...) when the CRD's own validation let it through.
 * Either way it names the Secret that signs the crew's webhooks (`webhookSigning`, as the reconciler found or made it).
 */
export function desiredCrewStatus(
  crew: { spec?: unknown; generation?: number },
  previous: CrewStatus | undefined,
  now: string,
  webhookSigning?: CrewWebhookSigning,
): CrewStatus {
  const parsed = crewSpec.safeParse(crew.spec);
  const generation = crew.generation !== undefined ? { observedGeneration: crew.generation } : {};
  const signing = webhookSigning ? { webhookSigning } : {};
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message));
    const message = problems.join("; ");
    return {
      ...generation,
      ...signing,
      conditions: setCondition(
        previous?.conditions,
        {
          type: "Ready",
          status: "False",
          reason: "InvalidSpec",
          message: truncate(message),
          ...generation,
        },
        now,
      ),
    };
  }
  const spec = parsed.data;
  return {
    ...generation,
    ...signing,
    inputs: discoverInputs(spec),
    taskCount: spec.tasks.length,
    conditions: setCondition(
      previous?.conditions,
      {
        type: "Ready",
        status: "True",
        reason: "Valid",
        message: `${spec.tasks.length} tasks, ${spec.agents.length} agents`,
        ...generation,
      },
      now,
    ),
  };
}
