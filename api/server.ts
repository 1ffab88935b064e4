import type { RequestListener } from "node:http";
import { listen, type RunningServer } from "../platform/http/server.ts";
import { createApp, type ApiDeps } from "./app.ts";
import { statusPolls } from "./status-polls.ts";

export type { RunningServer };

/**
 * Starts the crew API on host:port (port 0 picks a free one). Status polls the caches can answer at once are answered
 * before the app (api/status-polls.ts); everything else is the app's.
 */
export async function startApi(deps: ApiDeps & { host?: string; port: number }): Promise<RunningServer> {
  const app = createApp(deps);
  const polls = statusPolls(deps);
  const handler: RequestListener = polls
    ? (req, res) => {
        if (!polls(req, res)) app(req, res);
      }
    : app;
  const { server, url, stop } = await listen(handler, deps.host ?? "0.0.0.0", deps.port);
  server.keepAliveTimeout = 65_000;
  return { url, stop };
}
