import { taskJobName } from "./task-names.ts";

/**
 * The contract between the controller, which mints an execution's app credential into a Secret of its own, and the
 * runner in each of its task pods, which reads it from the mounted volume (task pods have no right to read Secrets).
 */

/** Where the runner finds the credential inside a task pod. */
export const APPS_CREDENTIAL_DIR = "/etc/kubecrew/apps";
/** The Secret's key, and so the file's name in the mounted directory. */
export const APPS_CREDENTIAL_KEY = "credential";
export const APPS_CREDENTIAL_PATH = `${APPS_CREDENTIAL_DIR}/${APPS_CREDENTIAL_KEY}`;

/** The one name of an execution's app-credential Secret (the task Jobs are `<execution>-<index>`). */
export function appsSecretName(execution: string): string {
  return taskJobName(execution, 0).replace(/-0$/, "-apps");
}
