import { KubecrewError } from "../core/errors.ts";

/** `kubecrew model pull` could not get the model, or got one it will not keep: the message says which and why. */
export class ModelPullError extends KubecrewError {
  readonly code = "model_pull_failed";
  override name = "ModelPullError";
}
