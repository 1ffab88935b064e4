import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server } from "node:net";

/** A real loopback port something listens on (a plain TCP server), for start-up errors of servers given that port. */
export async function occupyPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server: Server = createServer((socket) => socket.destroy());
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return { port: address.port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Runs `kubecrew <command>` (cli/main.ts, as `npm run kubecrew` does) with exactly `env` and PATH; killed after 60 s. */
export async function runKubecrew(
  command: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["cli/main.ts", command], {
    cwd: new URL("../../", import.meta.url).pathname,
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const [code] = (await once(child, "exit")) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}
