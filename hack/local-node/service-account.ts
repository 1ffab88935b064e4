import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { stringify } from "yaml";

/** A token for the pod's service account through the TokenRequest API, bound to the pod (invalid once it is gone). */
export async function requestPodToken(
  core: CoreV1Api,
  pod: V1Pod,
  audience: string | undefined,
  expirationSeconds: number,
): Promise<string> {
  const namespace = pod.metadata!.namespace!;
  const request = await core.createNamespacedServiceAccountToken({
    name: pod.spec?.serviceAccountName ?? "default",
    namespace,
    body: {
      spec: {
        audiences: audience ? [audience] : [],
        expirationSeconds,
        boundObjectRef: { apiVersion: "v1", kind: "Pod", name: pod.metadata!.name!, uid: pod.metadata!.uid! },
      },
    },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`the TokenRequest for service account ${pod.spec?.serviceAccountName} returned no token`);
  return token;
}

/**
 * The kubeconfig a process of the pod gets through KUBECONFIG: the cluster, the pod's service-account token and the
 * pod's namespace as the default, so `KubeConfig.loadFromDefault()` acts as that service account.
 */
export function serviceAccountKubeconfig(server: string, caPem: Buffer, token: string, namespace: string): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "local", cluster: { server, "certificate-authority-data": caPem.toString("base64") } }],
    users: [{ name: "service-account", user: { token } }],
    contexts: [{ name: "service-account", context: { cluster: "local", user: "service-account", namespace } }],
    "current-context": "service-account",
  });
}
