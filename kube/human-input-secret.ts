import type { KubeObject } from "./runtime/client.ts";
import { CREW_EXECUTIONS, LABEL_EXECUTION, LABEL_MANAGED_BY, MANAGED_BY } from "./resources.ts";
import { taskJobName } from "./task-names.ts";

/**
 * The contract between the API, which keeps the credentials a kickoff gave for its human-input webhook in a Secret
 * of the execution's own (never in the CrewExecution), and the controller, which reads it to deliver that webhook.
 */

/** The Secret's key: the Authorization header's value (`Bearer <token>` or `Basic <base64>`). */
export const HUMAN_INPUT_AUTH_KEY = "authorization";

/** The one name of an execution's human-input webhook Secret. */
export function humanInputSecretName(execution: string): string {
  return taskJobName(execution, 0).replace(/-0$/, "-human-input");
}

/** The Secret, owned by the execution (deleted with it). */
export function humanInputSecret(
  execution: { name: string; namespace: string; uid: string },
  authorization: string,
): KubeObject & { data: Record<string, string> } {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: humanInputSecretName(execution.name),
      namespace: execution.namespace,
      labels: { [LABEL_EXECUTION]: execution.name, [LABEL_MANAGED_BY]: MANAGED_BY },
      ownerReferences: [
        {
          apiVersion: CREW_EXECUTIONS.apiVersion,
          kind: CREW_EXECUTIONS.kind,
          name: execution.name,
          uid: execution.uid,
          blockOwnerDeletion: true,
        },
      ],
    },
    type: "Opaque",
    data: { [HUMAN_INPUT_AUTH_KEY]: Buffer.from(authorization, "utf8").toString("base64") },
  };
}
