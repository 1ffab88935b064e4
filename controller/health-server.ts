import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

export interface HealthChecks {
  /** The process works: its informers are not stuck. A failure names what is wrong. */
  live: () => string | undefined;
  /** The process can do its job: caches synced (or it is a standby replica). */
  ready: () => string | undefined;
}

/** /healthz, /readyz and /metrics on one small HTTP server (port 8081 by default). */
export async function startHealthServer(options: {
  host: string;
  port: number;
  checks: HealthChecks;
  registry: Registry;
}): Promise<{ url: string; stop(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const answer = (problem: string | undefined) => {
      res.writeHead(problem ? 503 : 200, { "Content-Type": "text/plain; charset=utf-8" });
      res.end(problem ? `${problem}\n` : "ok\n");
    };
    if (path === "/healthz" || path === "/livez") return answer(options.checks.live());
    if (path === "/readyz") return answer(options.checks.ready());
    if (path === "/metrics") {
      options.registry.metrics().then(
        (text) => {
          res.writeHead(200, { "Content-Type": options.registry.contentType });
          res.end(text);
        },
        (err: unknown) => {
          res.writeHead(500, { "Content-Type": "text/plain" });
          res.end(`metrics failed: ${String(err)}\n`);
        },
      );
      return;
    }
    res.writeHead(404, { "Content-Type": "text/plain" });
    res.end("not found\n");
  });
  server.listen(options.port, options.host);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  return {
    url: `http://${host}:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
