import { KubeConfig } from "@kubernetes/client-node";
import { KubeClient } from "../../../kube/runtime/client.ts";
import {
  applyCrew,
  createNamespace,
  deleteNamespace,
  startClusterApi,
  startControllerProcess,
  type ClusterApi,
  type ControllerProcess,
} from "./fixture.ts";

export type ControllerOptions = NonNullable<Parameters<typeof startControllerProcess>[2]>;

/**
 * The system a test file starts itself, as opposed to an installed one (installed.ts): for the tests that kill,
 * restart or read the metrics of their own controller. A namespace of its own with the test's crews, the crew API in
 * this process, and every controller process the test starts in it.
 */
export interface OwnSystem {
  namespace: string;
  api: ClusterApi;
  /** An admin client of the cluster (made on first use), for what kubectl shows poorly: watches, Leases. */
  readonly client: KubeClient;
  /** Every controller started here, in order (killed by `stop`). */
  controllers: ControllerProcess[];
  /** Starts one more controller watching the namespace. */
  startController(options?: ControllerOptions): Promise<ControllerProcess>;
  /** Stops the API, kills every controller, closes the client and deletes the namespace. */
  stop(): Promise<void>;
}

export interface OwnSystemOptions {
  /** Crew manifests applied to the namespace before anything starts. */
  crews?: string[];
  /** A controller started before the API, with these options; none when absent (the test starts its own). */
  controller?: ControllerOptions;
  /** How `stop` kills the controllers: SIGTERM (a clean shutdown) unless given. */
  killWith?: NodeJS.Signals;
}

/** A namespace `e2e-<prefix>-…` with `crews`, the controller of `options.controller` if any, then the crew API. */
export async function startOwnSystem(
  kubeconfig: string,
  prefix: string,
  options: OwnSystemOptions = {},
): Promise<OwnSystem> {
  const namespace = await createNamespace(kubeconfig, prefix);
  const controllers: ControllerProcess[] = [];
  let client: KubeClient | undefined;
  let api: ClusterApi | undefined;
  const startController = async (controllerOptions: ControllerOptions = {}) => {
    const controller = await startControllerProcess(kubeconfig, namespace, controllerOptions);
    controllers.push(controller);
    return controller;
  };
  const stop = async () => {
    await api?.stop();
    for (const c of controllers) await c.kill(options.killWith ?? "SIGTERM");
    client?.close();
    await deleteNamespace(kubeconfig, namespace);
  };
  try {
    for (const crew of options.crews ?? []) await applyCrew(kubeconfig, namespace, crew);
    if (options.controller) await startController(options.controller);
    api = await startClusterApi(kubeconfig, namespace);
  } catch (error) {
    await stop().catch(() => undefined); // the set-up's own error is the one to report
    throw error;
  }
  return {
    namespace,
    api,
    controllers,
    get client() {
      if (!client) {
        const kc = new KubeConfig();
        kc.loadFromFile(kubeconfig);
        client = new KubeClient(kc);
      }
      return client;
    },
    startController,
    stop,
  };
}
