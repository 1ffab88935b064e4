#!/usr/bin/env node
// The kubecrew local node: registers a Node with the cluster of --kubeconfig and runs the pods bound to it as local
// processes. Started by hack/local-cluster.sh up; see hack/README.md for what a pod's process sees.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createLogger } from "../../core/logger.ts";
import { startLocalNode } from "./local-node.ts";

const { values } = parseArgs({
  options: {
    kubeconfig: { type: "string" },
    "state-dir": { type: "string" },
    "node-name": { type: "string", default: "kubecrew-local" },
    "serving-cert": { type: "string" },
    "serving-key": { type: "string" },
    "log-level": { type: "string", default: "info" },
  },
});
if (!values.kubeconfig || !values["state-dir"]) {
  console.error(
    "usage: node hack/local-node/main.ts --kubeconfig <file> --state-dir <dir> [--node-name <name>] [--serving-cert <pem> --serving-key <pem>]",
  );
  process.exit(2);
}

const log = createLogger({ name: "local-node", level: values["log-level"] });
const node = await startLocalNode({
  kubeconfigPath: values.kubeconfig,
  stateDir: values["state-dir"],
  nodeName: values["node-name"],
  repoRoot: join(dirname(fileURLToPath(import.meta.url)), "..", ".."),
  serving:
    values["serving-cert"] && values["serving-key"]
      ? { certFile: values["serving-cert"], keyFile: values["serving-key"] }
      : undefined,
  log,
});

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "Stopping the local node and its pods' processes");
    void node.stop().finally(() => process.exit(0));
  });
}
