import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registry } from "prom-client";
import { listen, type RunningServer } from "../platform/http/server.ts";

/**
 * The crew API's metrics, `GET /metrics`, on a port of their own (KUBECREW_API_METRICS_PORT): not beside the crew
 * routes, which an Ingress exposes, and not counted among the requests they measure.
 */
export async function startMetricsServer(options: {
  host: string;
  port: number;
  registry: Registry;
}): Promise<RunningServer> {
  const { registry } = options;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "Content-Type": "text/plain" });
      res.end("not found\n");
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { "Content-Type": registry.contentType });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (err: unknown) => {
        res.writeHead(500, { "Content-Type": "text/plain" });
        res.end(`metrics failed: ${String(err)}\n`);
      },
    );
  };
  const { url, stop } = await listen(handler, options.host, options.port);
  return { url, stop };
}
