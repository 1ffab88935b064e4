/**
 * The volume holding the `local` provider's GGUF models in a cluster (docs/local-model.md): a task pod never
 * downloads a model, it reads it from this volume, mounted read-only at MODEL_MOUNT_PATH in the pods of tasks whose
 * agents run the local provider, the runner pointed at it by KUBECREW_MODEL_DIR. Other task pods do not mount it (a
 * ReadWriteOnce claim would tie every task to one node).
 */
import { z } from "zod";
import { MODEL_DIR_ENV } from "../core/local-models.ts";
import type { TaskAssignment } from "../core/task-assignment.ts";

export const MODEL_MOUNT_PATH = "/models";
const VOLUME_NAME = "models";

/** A Kubernetes volume source without its name: one key, e.g. {"persistentVolumeClaim": {"claimName": "models"}}. */
export type ModelVolumeSource = Record<string, Record<string, unknown>>;

/** KUBECREW_RUNNER_MODEL_VOLUME: the volume source as JSON (the chart's controller.runner.models.volume). */
export const modelVolumeSource = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "is not JSON" });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .record(z.string(), z.record(z.string(), z.unknown()))
      .refine((v) => Object.keys(v).length === 1, 'must be one volume source, e.g. {"persistentVolumeClaim": {…}}'),
  );

/** Whether the task's agent, or an agent it may delegate to, runs the local provider. */
export function usesLocalModel(assignment: TaskAssignment): boolean {
  const agents = [assignment.agent, ...(assignment.coworkers ?? []).map((c) => c.agent)];
  return agents.some((a) => a.llm?.provider === "local");
}

/** The pod's parts for the model volume: none unless one is configured and the task runs a local model. */
export function modelVolumeParts(assignment: TaskAssignment, source: ModelVolumeSource | undefined) {
  if (!source || !usesLocalModel(assignment)) return { env: [], mounts: [], volumes: [] };
  return {
    env: [{ name: MODEL_DIR_ENV, value: MODEL_MOUNT_PATH }],
    mounts: [{ name: VOLUME_NAME, mountPath: MODEL_MOUNT_PATH, readOnly: true }],
    volumes: [{ name: VOLUME_NAME, ...source }],
  };
}
