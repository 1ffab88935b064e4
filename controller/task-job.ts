import type { RunnerSettings } from "../core/crew.ts";
import type { TaskAssignment } from "../core/task-assignment.ts";
import { assignmentUsesApps } from "../core/crew-apps.ts";
import { secretEnvName } from "../core/tools.ts";
import { APPS_CREDENTIAL_DIR, APPS_CREDENTIAL_PATH } from "../kube/apps-secret.ts";
import type { KubeObject, OwnerReference } from "../kube/runtime/client.ts";
import { CONFIG_MAPS, CREW_EXECUTIONS, JOBS } from "../kube/resources.ts";
import { modelVolumeParts, type ModelVolumeSource } from "./model-volume.ts";
import {
  ASSIGNMENT_DIR,
  ASSIGNMENT_FILE,
  CONTEXT_DIR,
  CONTEXT_FILES,
  contextConfigMapName,
  runJobName,
  taskLabels as childLabels,
} from "../kube/task-names.ts";

export const LLM_API_KEY_ENV = "KUBECREW_LLM_API_KEY";
/** The runner's user: nonroot in distroless images. */
export const RUNNER_UID = 65532;

export interface TaskJobSettings {
  /** Image when the crew names none. */
  defaultImage: string;
  /** Image of `runtime: crewai` crews that name none (the default image when unset). */
  crewaiImage?: string;
  /** Service account when the crew names none. */
  defaultServiceAccount: string;
  imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  /** The runner's command; the assignment path is appended. */
  runnerCommand: string[];
  /** Extra environment for the runner (e.g. log level). */
  extraEnv?: { name: string; value: string }[];
  /** The volume of the local provider's models, mounted in the pods of tasks that run one (./model-volume.ts). */
  modelVolume?: ModelVolumeSource;
}

export interface ExecutionRef {
  name: string;
  namespace: string;
  uid: string;
  crew: string;
}

export function executionOwner(execution: ExecutionRef): OwnerReference {
  return {
    apiVersion: CREW_EXECUTIONS.apiVersion,
    kind: CREW_EXECUTIONS.kind,
    name: execution.name,
    uid: execution.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function taskLabels(execution: ExecutionRef, assignment: TaskAssignment): Record<string, string> {
  return childLabels({
    execution: execution.name,
    crew: execution.crew,
    name: assignment.task.name,
    index: assignment.task.index,
    revision: assignment.task.revision ?? 0,
  });
}

/** The apiserver's limit on the summed values of one ConfigMap (core.MaxSecretSize). */
export const CONFIG_MAP_LIMIT = 1024 * 1024;

/** A ConfigMap a task's pod mounts, with where. */
export interface TaskMount {
  volume: string;
  configMap: string;
  mountPath: string;
}

export interface TaskInputs {
  configMaps: KubeObject[];
  /** Mounts besides the assignment's own (context outputs moved out of it). */
  contextMounts: TaskMount[];
}

function configMap(
  execution: ExecutionRef,
  assignment: TaskAssignment,
  name: string,
  data: Record<string, string>,
): KubeObject {
  return {
    apiVersion: CONFIG_MAPS.apiVersion,
    kind: CONFIG_MAPS.kind,
    metadata: {
      name,
      namespace: execution.namespace,
      labels: taskLabels(execution, assignment),
      ownerReferences: [executionOwner(execution)],
    },
    data,
  };
}

const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/**
 * The task's ConfigMaps: `<execution>-<index>` (a whole project's: `<execution>-p`) with the assignment; when earlier outputs make it larger than a
 * ConfigMap may be, the largest context outputs move (whole, as raw text) into ConfigMaps of their own,
 * `<execution>-<index>-c<j>`, which the runner reads back in. Throws when even that cannot fit.
 */
export function taskInputs(execution: ExecutionRef, assignment: TaskAssignment): TaskInputs {
  const revision = assignment.task.revision ?? 0;
  const name = runJobName(execution.name, assignment);
  const context = assignment.context.map((c) => ({ ...c }));
  const files: Record<string, string> = {};
  const contextMounts: TaskMount[] = [];
  const extra: KubeObject[] = [];
  const mainData = () => {
    const data: Record<string, string> = { [ASSIGNMENT_FILE]: JSON.stringify({ ...assignment, context }) };
    if (contextMounts.length > 0) data[CONTEXT_FILES] = JSON.stringify(files);
    return data;
  };
  const size = (data: Record<string, string>) => Object.values(data).reduce((n, v) => n + bytes(v), 0);
  const byLength = context.map((c, j) => ({ j, length: bytes(c.output) })).sort((a, b) => b.length - a.length);
  for (const { j, length } of byLength) {
    if (size(mainData()) <= CONFIG_MAP_LIMIT || length === 0) break;
    const cmName = contextConfigMapName(execution.name, assignment.task.index, j, revision);
    const mountPath = `${CONTEXT_DIR}/${j}`;
    extra.push(configMap(execution, assignment, cmName, { output: context[j]!.output }));
    contextMounts.push({ volume: `context-${j}`, configMap: cmName, mountPath });
    files[String(j)] = `${mountPath}/output`;
    context[j]!.output = "";
  }
  const data = mainData();
  if (size(data) > CONFIG_MAP_LIMIT) {
    throw new Error(
      `the assignment of task "${assignment.task.name}" is ${size(data)} bytes without its context, above a ConfigMap's ${CONFIG_MAP_LIMIT}`,
    );
  }
  return { configMaps: [configMap(execution, assignment, name, data), ...extra], contextMounts };
}

/** The task's ConfigMap when its assignment fits in one (the usual case). */
export function taskConfigMap(execution: ExecutionRef, assignment: TaskAssignment): KubeObject {
  return taskInputs(execution, assignment).configMaps[0]!;
}

/**
 * The MCP header values the task's servers take from Secrets (its agent's, and its coworkers': their work runs in the
 * pod too, a whole run's every agent), as the variables the runner reads them from (`secretEnvName`): the kubelet
 * resolves them, so the runner's account needs no access to Secrets.
 */
function mcpHeaderSecretEnv(assignment: TaskAssignment) {
  const refs = new Map<string, { name: string; key: string }>();
  const servers = [assignment.tools, ...(assignment.coworkers ?? []).map((c) => c.tools)].flatMap((t) => t.mcpServers);
  for (const server of servers) {
    for (const header of server.headers) {
      const ref = header.valueFrom?.secretKeyRef;
      if (ref) refs.set(secretEnvName(ref), ref);
    }
  }
  return [...refs].map(([name, ref]) => ({ name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } }));
}

/**
 * The API keys of the coworkers a task's agent may delegate to, each from its own Secret, as the variables the runner
 * reads them from (`secretEnvName`); the task's agent's own key is KUBECREW_LLM_API_KEY.
 */
function coworkerKeyEnv(assignment: TaskAssignment) {
  const refs = new Map<string, { name: string; key: string }>();
  for (const { agent } of assignment.coworkers ?? []) {
    const ref = agent.llm?.apiKeySecretRef;
    if (ref) refs.set(secretEnvName(ref), ref);
  }
  return [...refs].map(([name, ref]) => ({ name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } }));
}

/** Connected apps for a task whose agent or a coworker has `apps`: the MCP endpoint, and the execution's credential Secret. */
export interface TaskApps {
  url: string;
  secretName: string;
}

/** The image of a task whose crew names none: the crewai runtime's for `runtime: crewai`, the runner's otherwise. */
export function runnerImage(assignment: TaskAssignment, settings: TaskJobSettings): string {
  return assignment.runtime === "crewai" ? (settings.crewaiImage ?? settings.defaultImage) : settings.defaultImage;
}

/** The runner's container, by name in the Job's pod failure policy. */
const RUNNER_CONTAINER = "runner";

/**
 * How a task that calls one tool directly (`toolCall`: a flow's tool method) meets a failed pod: a runner that exited
 * non-zero is the tool's failure and fails the Job at once, as CrewAI calls a tool once; a pod lost to a disruption
 * (drain, eviction, preemption) is replaced without counting against the retries. Rules apply in order: an evicted
 * runner ends on SIGTERM with a non-zero code, so the disruption rule comes first.
 */
export const TOOL_CALL_POD_FAILURE_POLICY = {
  rules: [
    { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget", status: "True" }] },
    { action: "FailJob", onExitCodes: { containerName: RUNNER_CONTAINER, operator: "NotIn", values: [0] } },
  ],
};

/**
 * The Job that runs one task (or a whole project, `<execution>-p`): one pod at a time, retried by the Job controller
 * (`runner.retries`: a model's answer may differ on the next try), hardened; a tool call is not retried.
 */
export function taskJob(
  execution: ExecutionRef,
  assignment: TaskAssignment,
  runner: RunnerSettings,
  settings: TaskJobSettings,
  contextMounts: TaskMount[] = [],
  apps?: TaskApps,
): KubeObject {
  const name = runJobName(execution.name, assignment);
  const labels = taskLabels(execution, assignment);
  const keyRef = assignment.agent.llm?.apiKeySecretRef;
  // The credential reaches the runner as a read-only file of the mounted Secret: the pod's account cannot read Secrets.
  const withApps = apps && assignmentUsesApps(assignment) ? apps : undefined;
  const models = modelVolumeParts(assignment, settings.modelVolume);
  const env = [
    ...(keyRef ? [{ name: LLM_API_KEY_ENV, valueFrom: { secretKeyRef: { name: keyRef.name, key: keyRef.key } } }] : []),
    ...mcpHeaderSecretEnv(assignment),
    ...coworkerKeyEnv(assignment),
    ...(withApps
      ? [
          { name: "KUBECREW_APPS_URL", value: withApps.url },
          { name: "KUBECREW_APPS_CREDENTIAL_FILE", value: APPS_CREDENTIAL_PATH },
        ]
      : []),
    // The pod's identity (the Downward API): a failed attempt's result is named by it, the runner's spans carry it.
    { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
    ...models.env,
    ...(settings.extraEnv ?? []),
  ];
  return {
    apiVersion: JOBS.apiVersion,
    kind: JOBS.kind,
    metadata: {
      name,
      namespace: execution.namespace,
      labels,
      ownerReferences: [executionOwner(execution)],
    },
    spec: {
      // A whole project's run (spec.runner.crew) carries every task: the execution's time, and no retry, which would run
      // the tasks that already reported again (core/whole-project.ts).
      backoffLimit: assignment.project ? 0 : runner.retries,
      ...(assignment.task.toolCall && !assignment.project ? { podFailurePolicy: TOOL_CALL_POD_FAILURE_POLICY } : {}),
      activeDeadlineSeconds: assignment.project ? runner.executionTimeoutSeconds : runner.taskTimeoutSeconds,
      completions: 1,
      parallelism: 1,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          serviceAccountName: runner.serviceAccountName ?? settings.defaultServiceAccount,
          automountServiceAccountToken: true,
          enableServiceLinks: false,
          // The pod's pause process is PID 1, not the runner: the kernel drops a signal PID 1 has no handler for, so
          // a task stopped while Node was still starting (before it handles SIGTERM) ran on until SIGKILL, 30 s later.
          shareProcessNamespace: true,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUNNER_UID,
            runAsGroup: RUNNER_UID,
            fsGroup: RUNNER_UID,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [
            {
              name: RUNNER_CONTAINER,
              image: runner.image ?? runnerImage(assignment, settings),
              ...(settings.imagePullPolicy ? { imagePullPolicy: settings.imagePullPolicy } : {}),
              command: [...settings.runnerCommand, `${ASSIGNMENT_DIR}/${ASSIGNMENT_FILE}`],
              env,
              // A runner that cannot even write its result leaves its last log line for the controller to report.
              terminationMessagePolicy: "FallbackToLogsOnError",
              ...(runner.resources ? { resources: runner.resources } : {}),
              securityContext: {
                runAsNonRoot: true,
                runAsUser: RUNNER_UID,
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                privileged: false,
                capabilities: { drop: ["ALL"] },
                seccompProfile: { type: "RuntimeDefault" },
              },
              volumeMounts: [
                { name: "assignment", mountPath: ASSIGNMENT_DIR, readOnly: true },
                { name: "tmp", mountPath: "/tmp" },
                ...contextMounts.map((m) => ({ name: m.volume, mountPath: m.mountPath, readOnly: true })),
                ...(withApps ? [{ name: "apps-credential", mountPath: APPS_CREDENTIAL_DIR, readOnly: true }] : []),
                ...models.mounts,
              ],
            },
          ],
          volumes: [
            { name: "assignment", configMap: { name } },
            { name: "tmp", emptyDir: { sizeLimit: "256Mi" } },
            ...contextMounts.map((m) => ({ name: m.volume, configMap: { name: m.configMap } })),
            ...(withApps
              ? [{ name: "apps-credential", secret: { secretName: withApps.secretName, defaultMode: 0o440 } }]
              : []),
            ...models.volumes,
          ],
        },
      },
    },
  };
}
