import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repo = join(import.meta.dirname, "..", "..", "..");
const node = join(repo, "node_modules", ".bin", "node");
const main = join(repo, "cli", "main.ts");

// In a container the CLI is PID 1, and the kernel drops a signal PID 1 has no handler for. `kubecrew api` against an
// apiserver that accepts connections and never answers stays in its start-up, before it handles SIGTERM itself: the
// kubelet's SIGTERM (a deleted pod, a stopped execution's task) must still end it, not wait for SIGKILL.
describe("a SIGTERM while a command is still starting", () => {
  let silent: Server;
  const sockets: Socket[] = [];
  let connected: Promise<void>;
  let dir: string;

  beforeAll(async () => {
    let onConnection!: () => void;
    connected = new Promise((resolve) => (onConnection = resolve));
    silent = createServer((socket) => {
      sockets.push(socket);
      onConnection();
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as { port: number }).port;
    dir = mkdtempSync(join(tmpdir(), "early-signal-"));
    writeFileSync(
      join(dir, "kubeconfig"),
      `apiVersion: v1
kind: Config
clusters: [{name: silent, cluster: {server: "https://127.0.0.1:${port}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: silent, context: {cluster: silent, user: u, namespace: default}}]
current-context: silent
`,
    );
  });

  afterAll(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("ends it at once when it runs as PID 1 of its own PID namespace, as in a container (exit 143)", async () => {
    const port = (silent.address() as { port: number }).port;
    const unshare = spawn("unshare", ["--pid", "--fork", "--kill-child", node, main, "api"], {
      env: {
        PATH: process.env.PATH ?? "",
        KUBECONFIG: join(dir, "kubeconfig"),
        PORT: "0",
        KUBECREW_REDIS_URL: `redis://127.0.0.1:${port}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    unshare.stdout.setEncoding("utf8").on("data", (c: string) => (output += c));
    unshare.stderr.setEncoding("utf8").on("data", (c: string) => (output += c));
    const exited = new Promise<number | null>((resolve) => unshare.once("close", (code) => resolve(code)));
    try {
      // It is starting: it has reached the apiserver, which never answers.
      await connected;
      const pid1 = Number(execFileSync("pgrep", ["-P", String(unshare.pid)], { encoding: "utf8" }).trim());
      expect(output).not.toContain("Crew API listening");
      process.kill(pid1, "SIGTERM");
      const code = await Promise.race([exited, new Promise<"running">((r) => setTimeout(() => r("running"), 5000))]);
      expect(code, `still running 5 s after SIGTERM; output: ${output}`).toBe(143);
    } finally {
      unshare.kill("SIGKILL");
    }
  });
});
