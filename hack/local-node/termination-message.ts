import { readFileSync } from "node:fs";
import type { V1Container } from "@kubernetes/client-node";

/** The kubelet reads at most this much of a termination message file. */
const LIMIT = 4096;

/**
 * The kubelet's termination message of a container that exited: what the process wrote to its terminationMessagePath
 * (default /dev/termination-log; the node's file bound there is `written`), at most 4 KiB; with FallbackToLogsOnError
 * and a failure, the end of its log (`logFile`) instead.
 */
export function terminationMessage(
  terminationLog: string,
  spec: V1Container,
  exitCode: number,
  logFile: string,
): string | undefined {
  const read = (file: string) => {
    try {
      const text = readFileSync(file, "utf8");
      return text.length > LIMIT ? text.slice(-LIMIT) : text;
    } catch {
      return "";
    }
  };
  const written = read(terminationLog);
  if (written) return written;
  if (spec.terminationMessagePolicy === "FallbackToLogsOnError" && exitCode !== 0) {
    return read(logFile).split("\n").slice(-80).join("\n").slice(-2048) || undefined;
  }
  return undefined;
}
