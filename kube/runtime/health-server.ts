import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registry } from "prom-client";
import { listen } from "../../platform/http/server.ts";

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
  const handler = (req: IncomingMessage, res: ServerResponse) => {
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
  };
  const { url, stop } = await listen(handler, options.host, options.port);
  return { url, stop };
}
