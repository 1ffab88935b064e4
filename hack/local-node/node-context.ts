import type { CoreV1Api } from "@kubernetes/client-node";
import type { Logger } from "../../core/logger.ts";

/** What every pod on the node shares. */
export interface NodeContext {
  core: CoreV1Api;
  log: Logger;
  /** Per-pod directories live under here. */
  podsDir: string;
  pgidDir: string;
  /** PATH of every container: <repo>/node_modules/.bin, the `kubecrew` shim, the system. */
  path: string;
  apiServer: { url: URL; caPem: Buffer };
}
