import { waitFor, type Loose } from "./fixture.ts";
import { kubectl } from "./kubectl.ts";

/**
 * The installed chart's own pods (installed mode, installed.ts), for tests that take one away as a node failure or an
 * OOM kill would and watch its Deployment replace it.
 */

/** The pods of one of the chart's components (`controller`, `api`, `integrations`), by the chart's labels. */
export async function componentPods(kubeconfig: string, namespace: string, component: string): Promise<Loose[]> {
  const selector = `app.kubernetes.io/part-of=kubecrew,app.kubernetes.io/component=${component}`;
  return JSON.parse(await kubectl(kubeconfig, ["get", "pods", "-n", namespace, "-l", selector, "-o", "json"])).items;
}

const ready = (pod: Loose) =>
  pod.status?.phase === "Running" &&
  !pod.metadata.deletionTimestamp &&
  (pod.status?.conditions ?? []).some((c: Loose) => c.type === "Ready" && c.status === "True");

/** The one Ready pod of a component (it fails when there are several, or none). */
export async function readyPod(kubeconfig: string, namespace: string, component: string): Promise<string> {
  const pods = (await componentPods(kubeconfig, namespace, component)).filter(ready);
  if (pods.length !== 1) {
    throw new Error(`${component}: ${pods.length} Ready pods, expected one (is the chart installed with replicas 1?)`);
  }
  return pods[0].metadata.name as string;
}

/**
 * Deletes a pod at once, without a grace period (`--grace-period=0 --force`): the object goes from the API straight
 * away and the kubelet kills its containers, no shutdown handler runs — a SIGKILL, for its controller Deployment.
 */
export async function forceDeletePod(kubeconfig: string, namespace: string, name: string): Promise<void> {
  await kubectl(kubeconfig, ["delete", "pod", name, "-n", namespace, "--grace-period=0", "--force", "--wait=false"]);
}

/** Waits until the component's Deployment runs a Ready pod other than `gone`; answers its name. */
export function replacementPod(
  kubeconfig: string,
  namespace: string,
  component: string,
  gone: string,
  timeoutMs = 180_000,
): Promise<string> {
  return waitFor(
    `a new Ready ${component} pod in place of ${gone}`,
    async () => {
      const pods = await componentPods(kubeconfig, namespace, component);
      const fresh = pods.find((p) => p.metadata.name !== gone && ready(p));
      return fresh?.metadata.name as string | undefined;
    },
    timeoutMs,
    500,
  );
}
