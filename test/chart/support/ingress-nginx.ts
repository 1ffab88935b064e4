import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1Ingress } from "@kubernetes/client-node";

/**
 * Debian's nginx configured from rendered Ingress objects the way ingress-nginx configures itself, for the
 * annotations the chart uses: with `use-regex` on any Ingress of a host every path of that host is a case-insensitive
 * regex location (`~* "^<path>"`), longest path first; `rewrite-target` becomes `rewrite "(?i)<path>" <target> break`;
 * `proxy-body-size` becomes `client_max_body_size` (ingress-nginx's default is 1m). Services are reached at the
 * loopback ports given, since pods of the local node listen on the machine itself.
 */
export function ingressNginxConfig(
  ingresses: V1Ingress[],
  servicePorts: Record<string, number>,
  listen: number,
  dir: string,
): string {
  const locations = ingresses.flatMap((ingress) => {
    const annotations = ingress.metadata?.annotations ?? {};
    const bodySize = annotations["nginx.ingress.kubernetes.io/proxy-body-size"] ?? "1m";
    const rewrite = annotations["nginx.ingress.kubernetes.io/rewrite-target"];
    return (ingress.spec?.rules ?? []).flatMap((rule) =>
      (rule.http?.paths ?? []).map((p) => {
        const service = p.backend.service!.name;
        const port = servicePorts[service];
        if (!port) throw new Error(`no local port for Service ${service}`);
        return { path: p.path!, bodySize, rewrite, port };
      }),
    );
  });
  const regex = ingresses.some((i) => i.metadata?.annotations?.["nginx.ingress.kubernetes.io/use-regex"] === "true");
  locations.sort((a, b) => b.path.length - a.path.length);
  const blocks = locations.map(
    ({ path, bodySize, rewrite, port }) => `
    location ${regex ? `~* "^${path}"` : path} {
      client_max_body_size ${bodySize};
      ${rewrite ? `rewrite "(?i)${path}" ${rewrite} break;` : ""}
      proxy_set_header Host $host:$server_port;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_pass http://127.0.0.1:${port};
    }`,
  );
  return `
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
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${listen};${blocks.join("")}
  }
}
`;
}

export interface IngressNginx {
  url: string;
  config: string;
  stop(): Promise<void>;
}

export async function startIngressNginx(
  ingresses: V1Ingress[],
  servicePorts: Record<string, number>,
  listen: number,
): Promise<IngressNginx> {
  const dir = mkdtempSync(join(tmpdir(), "kubecrew-ingress-nginx-"));
  for (const sub of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, sub));
  const config = ingressNginxConfig(ingresses, servicePorts, listen, dir);
  writeFileSync(join(dir, "nginx.conf"), config);
  const child = spawn("/usr/sbin/nginx", ["-p", dir, "-c", join(dir, "nginx.conf"), "-e", join(dir, "error.log")], {
    stdio: "ignore",
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const socket = createConnection({ port: listen, host: "127.0.0.1" });
      socket.once("connect", () => (socket.destroy(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
  for (let i = 0; !(await listening()); i++) {
    if (child.exitCode !== null || i > 100) {
      const log = readFileSync(join(dir, "error.log"), { encoding: "utf8", flag: "a+" });
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${listen}`,
    config,
    async stop() {
      if (child.exitCode === null) child.kill("SIGQUIT");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
