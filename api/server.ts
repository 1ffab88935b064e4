import type { RequestListener } from "node:http";
import { performance } from "node:perf_hooks";
import { listen, type RunningServer } from "../platform/http/server.ts";
import { createApp, type ApiDeps } from "./app.ts";
import { statusBeforeRouting } from "./routes/status-route.ts";

export type { RunningServer };

/**
 * Starts the crew API on host:port (port 0 picks a free one). The status route's cache is asked before express
 * routes a request (api/routes/status-route.ts): a poll it answers at once never enters the app. With `metrics`,
 * every request is counted: a poll the cache answered at once on its series looked up beforehand, the others as they
 * end.
 */
export async function startApi(deps: ApiDeps & { host?: string; port: number }): Promise<RunningServer> {
  const app = createApp(deps);
  const status = statusBeforeRouting(deps);
  const { metrics } = deps;
  const handler: RequestListener = metrics
    ? (req, res) => {
        const startedAt = performance.now();
        if (status?.(req, res)) return metrics.statusAnswered(startedAt);
        metrics.track(req, res, startedAt);
        app(req, res);
      }
    : status
      ? (req, res) => void (status(req, res) || app(req, res))
      : app;
  const { server, url, stop } = await listen(handler, deps.host ?? "0.0.0.0", deps.port);
  server.keepAliveTimeout = 65_000;
  return { url, stop };
}
