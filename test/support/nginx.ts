import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./redis.ts";

export interface PrefixProxy {
  /** e.g. http://127.0.0.1:PORT/oauthsvc */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Debian's nginx as the prefix-stripping reverse proxy the chart's Ingress sets up: the same location regex and
 * rewrite ingress-nginx generates for `path: /oauthsvc(/|$)(.*)` with `rewrite-target: /$2`. Runs in the foreground
 * with its own prefix, config and temp paths in a temporary directory, on a free loopback port.
 */
export async function startPrefixProxy(options: {
  upstream: string;
  prefix?: string;
  port?: number;
}): Promise<PrefixProxy> {
  const prefix = options.prefix ?? "/oauthsvc";
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), "kubecrew-nginx-"));
  for (const sub of ["logs", "client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, sub));
  const upstream = new URL(options.upstream);
  const config = `
daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  client_max_body_size 10m;
  server {
    listen 127.0.0.1:${port};
    location ~* "^${prefix}(/|$)(.*)" {
      rewrite "(?i)${prefix}(/|$)(.*)" /$2 break;
      proxy_set_header Host $host:$server_port;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Prefix "${prefix}";
      proxy_pass http://${upstream.host};
    }
  }
}
`;
  writeFileSync(join(dir, "nginx.conf"), config);
  const child: ChildProcess = spawn(
    "/usr/sbin/nginx",
    ["-p", dir, "-c", join(dir, "nginx.conf"), "-e", join(dir, "logs/error.log")],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => {
      let log = "";
      try {
        log = readFileSync(join(dir, "logs/error.log"), "utf8");
      } catch {
        // no log written
      }
      reject(new Error(`nginx exited with ${code}: ${stderr}${log}`));
    }),
  );
  exited.catch(() => undefined);
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: "127.0.0.1" });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
  for (let i = 0; ; i++) {
    if (await Promise.race([listening(), exited])) break;
    if (i > 100) throw new Error(`nginx did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  process.once("exit", () => child.kill("SIGKILL"));
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
    port,
    async stop() {
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
