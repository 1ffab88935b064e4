import { silentLogger } from "../core/logger.ts";
import type { KubeClient, KubeObject } from "../kube/runtime/client.ts";
import { Informer } from "../kube/runtime/informer.ts";
import { CREW_EXECUTIONS, JOBS, LABEL_EXECUTION, resourcePath } from "../kube/resources.ts";
import { keyMetadata } from "./controller-support.ts";
import { epochMs } from "./controller-scale-observer.ts";

interface ExecutionView extends KubeObject {
  status?: { phase?: string; tasks?: { phase?: string }[] };
}
type JobView = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

/**
 * What bench/controller-scale sees of a run: when each execution finished and each of its tasks succeeded (from the
 * execution's status, keyed `<execution>/<task index>`), and which Jobs ended. The informers keep only those fields,
 * so the bench's memory stays small at 10,000 executions.
 */
export class ScaleWatch {
  readonly finished = new Map<string, number>();
  readonly failedExecutions: string[] = [];
  readonly taskSeen = new Map<string, number>();
  readonly jobsDone = new Set<string>();
  failedJobs = 0;
  private readonly executions: Informer<ExecutionView>;
  private readonly jobs: Informer<JobView>;

  constructor(client: KubeClient, namespace: string) {
    this.executions = new Informer<ExecutionView>({
      client,
      path: resourcePath(CREW_EXECUTIONS, namespace),
      log: silentLogger(),
      transform: (raw) => {
        const e = raw as ExecutionView;
        return {
          metadata: keyMetadata(e),
          status: { phase: e.status?.phase, tasks: (e.status?.tasks ?? []).map((t) => ({ phase: t.phase })) },
        };
      },
    });
    this.executions.on((event, e) => {
      if (event !== "delete") this.sawExecution(e);
    });
    this.jobs = new Informer<JobView>({
      client,
      path: resourcePath(JOBS),
      labelSelector: LABEL_EXECUTION,
      log: silentLogger(),
      transform: (raw) => {
        const j = raw as JobView;
        return {
          metadata: keyMetadata(j),
          status: {
            conditions: (j.status?.conditions ?? []).filter((c) => c.type === "Complete" || c.type === "Failed"),
          },
        };
      },
    });
    this.jobs.on((event, j) => {
      if (event !== "delete") this.sawJob(j);
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.executions.start(), this.jobs.start()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.executions.stop(), this.jobs.stop()]);
  }

  private sawExecution(e: ExecutionView): void {
    const at = epochMs();
    const name = e.metadata!.name!;
    e.status?.tasks?.forEach((t, i) => {
      if (t.phase === "Succeeded" && !this.taskSeen.has(`${name}/${i}`)) this.taskSeen.set(`${name}/${i}`, at);
    });
    const phase = e.status?.phase;
    if ((phase === "Succeeded" || phase === "Failed") && !this.finished.has(name)) {
      this.finished.set(name, at);
      if (phase === "Failed") this.failedExecutions.push(name);
    }
  }

  private sawJob(j: JobView): void {
    const key = `${j.metadata!.namespace}/${j.metadata!.name}`;
    if (this.jobsDone.has(key)) return;
    const ended = j.status?.conditions?.find((c) => c.status === "True");
    if (!ended) return;
    this.jobsDone.add(key);
    if (ended.type === "Failed") this.failedJobs++;
  }
}
