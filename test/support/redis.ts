import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.ts";

// Suites that start redis-server on a port of their choosing take freePort from here too.
export { freePort };

/** A real redis-server on a free loopback port, for tests. Start it, stop it, start it again on the same port. */
export interface RedisServer {
  url: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** SIGSTOP: the server keeps its connections open and answers nothing (a hung Redis). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "kubecrew-redis-"));
  let child: ChildProcess | undefined;

  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      if (child) return;
      child = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
        { stdio: "ignore" },
      );
      const exited = new Promise<never>((_, reject) =>
        child!.once("exit", (code) => reject(new Error(`redis-server exited with ${code}; is it installed?`))),
      );
      exited.catch(() => undefined);
      for (let i = 0; i < 100; i++) {
        if (await Promise.race([canConnect(port), exited])) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`redis-server did not listen on ${port}`);
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        running.once("exit", () => resolve());
        running.kill("SIGCONT");
        running.kill("SIGKILL");
      });
    },
    pause() {
      child?.kill("SIGSTOP");
    },
    resume() {
      child?.kill("SIGCONT");
    },
  };
  await server.start();
  const stop = server.stop.bind(server);
  server.stop = async () => {
    await stop();
  };
  process.once("exit", () => {
    child?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  return server;
}
