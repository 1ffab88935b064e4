import type { WebhookSigningResponse } from "../../core/api-bodies.ts";
import type { Crew } from "../../core/crew.ts";
import { serviceUnavailable } from "../errors.ts";
import type { ExecutionBackend } from "../execution-backend.ts";

/**
 * What `GET /webhook-signing` answers: the secret itself where the backend holds it (`kubecrew dev`), else the Secret
 * the Crew's status names (a cluster), which its owner reads with kubectl. A crew the controller has not looked at
 * yet has no such name: 503, try again shortly.
 */
export function webhookSigningBody(backend: ExecutionBackend, crew: Crew): WebhookSigningResponse {
  if (backend.webhookSigningSecret) {
    return { generated: true, secret: backend.webhookSigningSecret(crew.metadata.name) };
  }
  const signing = crew.status?.webhookSigning;
  if (!signing) {
    throw serviceUnavailable(
      `The controller has not yet named the Secret that signs the webhooks of crew "${crew.metadata.name}"`,
    );
  }
  return { generated: signing.generated, secret_ref: signing.secretRef };
}
