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
  /**
   * The Python of the crewai runtime's virtual environment (hack/crewai-venv.sh), when it exists: every container gets
   * it as KUBECREW_CREWAI_PYTHON, as the crewai runner image sets it (this node runs every image's command alike).
   */
  crewaiPython?: string;
  /** The node's state directory, where images declare their environment (local-images.ts). */
  stateDir: string;
  /** The checkout whose code the pods run. */
  repoRoot: string;
  apiServer: { url: URL; caPem: Buffer };
}
