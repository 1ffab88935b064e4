import type { CrewSpec, CrewStatus, CrewWebhookSigning } from "./crew.ts";
import { crewSpec } from "./crew-resource.ts";
import { setCondition } from "./conditions.ts";
import { discoverInputs } from "./inputs.ts";
import { schemaProblems } from "./schema-problems.ts";
import { truncate } from "./truncate.ts";

/** A Crew's spec decoded (as its caches keep it), or what is wrong with it. */
export type DecodedCrewSpec = { spec: CrewSpec; problems?: undefined } | { spec?: undefined; problems: string[] };

export function decodeCrewSpec(spec: unknown): DecodedCrewSpec {
  const parsed = crewSpec.safeParse(spec);
  return parsed.success ? { spec: parsed.data } : { problems: schemaProblems(parsed.error) };
}

/**
 * What a Crew's status should say: Ready True with the inputs it needs and its task count, or Ready False naming
 * every problem (a task naming a missing agent, duplicate names, ...) when the CRD's own validation let it through.
 * Either way it names the Secret that signs the crew's webhooks (`webhookSigning`, as the reconciler found or made it).
 */
export function desiredCrewStatus(
  crew: DecodedCrewSpec & { generation?: number },
  previous: CrewStatus | undefined,
  now: string,
  webhookSigning?: CrewWebhookSigning,
): CrewStatus {
  const generation = crew.generation !== undefined ? { observedGeneration: crew.generation } : {};
  const signing = webhookSigning ? { webhookSigning } : {};
  if (!crew.spec) {
    const message = crew.problems.join("; ");
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
  const { spec } = crew;
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
