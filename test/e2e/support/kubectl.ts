import { execFile, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

let binary: string | undefined;

/** kubectl: the one hack/tools.sh built next to the control plane when present, else the one on PATH. */
export function kubectlBinary(): string {
  if (binary) return binary;
  const repo = join(import.meta.dirname, "..", "..", "..");
  const assets = execFileSync("bash", [join(repo, "hack/tools.sh"), "path"], { encoding: "utf8" }).trim();
  binary = existsSync(join(assets, "kubectl")) ? join(assets, "kubectl") : "kubectl";
  return binary;
}

export async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const child = run(kubectlBinary(), args, {
    env: { ...process.env, KUBECONFIG: kubeconfig },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  const { stdout } = await child;
  return stdout;
}

/** Runs kubectl and answers its exit status and output instead of throwing (for `auth can-i`). */
export async function kubectlStatus(
  kubeconfig: string,
  args: string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    return { code: 0, stdout: await kubectl(kubeconfig, args, input), stderr: "" };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/**
 * A server-side dry-run create of `yaml` as a pod of `serviceAccount` would make it: its token's user, groups and the
 * pod name the apiserver binds to a projected token (what admission policies on `request.userInfo.extra` read).
 */
export function createAsPod(
  kubeconfig: string,
  identity: { namespace: string; serviceAccount: string; pod: string },
  yaml: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return kubectlStatus(
    kubeconfig,
    [
      "create",
      "--dry-run=server",
      "-f",
      "-",
      "--as",
      `system:serviceaccount:${identity.namespace}:${identity.serviceAccount}`,
      "--as-group",
      "system:serviceaccounts",
      "--as-user-extra",
      `authentication.kubernetes.io/pod-name=${identity.pod}`,
    ],
    yaml,
  );
}
