import "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** Path of an admin kubeconfig for the run's cluster. */
    kubeconfig: string;
  }
}

const repo = join(import.meta.dirname, "..", "..");

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync(command, args, { cwd: repo, env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
}

function kubectl(): string {
  const built = join(run("bash", ["hack/tools.sh", "path"]).trim(), "kubectl");
  return existsSync(built) ? built : "kubectl";
}

/** Installs whatever CRD manifests crds/ holds and waits until the apiserver serves them. */
function installCrds(kubeconfig: string): void {
  const dir = join(repo, "crds");
  const manifests = existsSync(dir) ? readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)) : [];
  if (manifests.length === 0) return;
  const files = manifests.flatMap((f) => ["-f", join(dir, f)]);
  run(kubectl(), ["--kubeconfig", kubeconfig, "apply", "--server-side", "--force-conflicts", ...files]);
  run(kubectl(), ["--kubeconfig", kubeconfig, "wait", "--for", "condition=Established", "--timeout", "60s", ...files]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Clusters of earlier runs that never reached their teardown (the run was killed): stop them and remove their state. */
function reapAbandonedClusters(): void {
  for (const entry of readdirSync(tmpdir())) {
    if (!entry.startsWith("kubecrew-cluster-")) continue;
    const dir = join(tmpdir(), entry);
    const owner = Number(existsSync(join(dir, "owner.pid")) ? readFileSync(join(dir, "owner.pid"), "utf8") : NaN);
    if (!Number.isInteger(owner) || alive(owner)) continue;
    try {
      run("bash", ["hack/local-cluster.sh", "down"], { ...process.env, KUBECREW_CLUSTER_DIR: dir });
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // another run is reaping it
    }
  }
}

/**
 * One cluster per test run: unless TEST_KUBECONFIG names an existing cluster, starts a private control plane and local
 * node (hack/local-cluster.sh up in a fresh state dir, so concurrent runs do not share one) and stops it at the end.
 */
export default async function setup(project: TestProject) {
  const existing = process.env.TEST_KUBECONFIG;
  if (existing) {
    installCrds(existing);
    project.provide("kubeconfig", existing);
    return;
  }
  reapAbandonedClusters();
  const stateDir = mkdtempSync(join(tmpdir(), "kubecrew-cluster-"));
  writeFileSync(join(stateDir, "owner.pid"), String(process.pid));
  const env = { ...process.env, KUBECREW_CLUSTER_DIR: stateDir };
  const stop = () => run("bash", ["hack/local-cluster.sh", "down"], env);
  try {
    run("bash", ["hack/local-cluster.sh", "up"], env);
    const kubeconfig = join(stateDir, "admin.kubeconfig");
    installCrds(kubeconfig);
    project.provide("kubeconfig", kubeconfig);
  } catch (error) {
    stop();
    console.error(`cluster: the control plane did not come up; its logs are in ${stateDir}/logs`);
    throw error;
  }
  return () => {
    stop();
    rmSync(stateDir, { recursive: true, force: true });
  };
}
