import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** A volume (or file) of the node bound at a path of the container. */
export interface ContainerMount {
  source: string;
  /** Where the container sees it: its mountPath, /dev/termination-log. */
  path: string;
  readOnly: boolean;
}

const ENTER_POD = join(dirname(fileURLToPath(import.meta.url)), "enter-pod.sh");

/**
 * unshare's options: a mount namespace of its own as root; without root, a user namespace where the process is root
 * (as the node's user outside), which may make mounts.
 */
function unshareOptions(): string[] {
  return process.getuid?.() === 0 ? ["--mount"] : ["--user", "--map-root-user", "--mount"];
}

const under = (path: string, dir: string) => path === dir || path.startsWith(dir === "/" ? dir : `${dir}/`);

/**
 * The command that runs `argv` with the container's paths: in a mount namespace of its own (enter-pod.sh) where each
 * mount is at its path and the working directory is `workingDir`. `stateDir` is an empty directory of the node.
 * `nodePaths` are what stands in for the image here (this checkout, the node's state, a declared image's sources):
 * those a mount hides (an emptyDir at /tmp over a checkout in /tmp) are bound again on top.
 */
export function namespacedArgv(
  stateDir: string,
  mounts: ContainerMount[],
  nodePaths: string[],
  workingDir: string,
  argv: string[],
): string[] {
  const binds = mounts.flatMap((m) => [m.readOnly ? "--ro-bind" : "--bind", m.source, m.path]);
  const hidden = nodePaths.filter((path) => mounts.some((m) => under(path, m.path)));
  const keep = hidden.flatMap((path) => ["--keep", path]);
  return [
    ...["unshare", ...unshareOptions(), "sh", ENTER_POD, stateDir, ...binds, ...keep],
    ...["--chdir", workingDir, "--", ...argv],
  ];
}

/**
 * Fails, saying why, when this machine cannot give a process a mount namespace (no root and unprivileged user
 * namespaces disabled, say): the node could run no pod.
 */
export function checkMountNamespaces(): void {
  try {
    execFileSync("unshare", [...unshareOptions(), "true"], { stdio: ["ignore", "ignore", "pipe"] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(
      `the local node runs each container in a mount namespace of its own and cannot make one here (unshare ${unshareOptions().join(" ")}: ${stderr || (error as Error).message}); run it as root, or allow unprivileged user namespaces`,
      { cause: error },
    );
  }
}
