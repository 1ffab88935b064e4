import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.ts";

export interface Nginx {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  /** The nginx.conf it runs with. */
  config: string;
  stop(): Promise<void>;
}

/**
 * Debian's nginx in the foreground with its own prefix, config, error log and temp paths in a temporary directory,
 * one server on loopback `port` with the `locations` given (`http` adds directives to the http block). Resolves once
 * nginx accepts connections; a start that fails throws with nginx's error log.
 */
export async function startNginx(options: { port: number; http?: string; locations: string }): Promise<Nginx> {
  const { port } = options;
  const dir = mkdtempSync(join(tmpdir(), "kubecrew-nginx-"));
  for (const sub of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, sub));
  const config = `
daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;${options.http ? `\n  ${options.http}` : ""}
  server {
    listen 127.0.0.1:${port};${options.locations}
  }
}
`;
  writeFileSync(join(dir, "nginx.conf"), config);
  const child = spawn("/usr/sbin/nginx", ["-p", dir, "-c", join(dir, "nginx.conf"), "-e", join(dir, "error.log")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (running()) child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: "127.0.0.1" });
      socket.once("connect", () => (socket.destroy(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
  for (let i = 0; !(await listening()); i++) {
    if (!running() || i > 100) {
      const log = readFileSync(join(dir, "error.log"), { encoding: "utf8", flag: "a+" });
      const how = running() ? `did not listen on ${port}` : `exited with ${child.exitCode ?? child.signalCode}`;
      await stop();
      throw new Error(`nginx ${how}: ${stderr}${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  process.once("exit", () => child.kill("SIGKILL"));
  return { url: `http://127.0.0.1:${port}`, port, config, stop };
}

export interface PrefixProxy {
  /** e.g. http://127.0.0.1:PORT/oauthsvc */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * nginx as the prefix-stripping reverse proxy the chart's Ingress sets up: the same location regex and rewrite
 * ingress-nginx generates for `path: /oauthsvc(/|$)(.*)` with `rewrite-target: /$2`, on a free loopback port.
 */
export async function startPrefixProxy(options: {
  upstream: string;
  prefix?: string;
  port?: number;
}): Promise<PrefixProxy> {
  const prefix = options.prefix ?? "/oauthsvc";
  const upstream = new URL(options.upstream);
  const nginx = await startNginx({
    port: options.port ?? (await freePort()),
    http: "client_max_body_size 10m;",
    locations: `
    location ~* "^${prefix}(/|$)(.*)" {
      rewrite "(?i)${prefix}(/|$)(.*)" /$2 break;
      proxy_set_header Host $host:$server_port;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Prefix "${prefix}";
      proxy_pass http://${upstream.host};
    }`,
  });
  return { url: `${nginx.url}${prefix}`, port: nginx.port, stop: nginx.stop };
}
