import { listen, type RunningServer } from "../platform/http/server.ts";
import { createApp, type ApiDeps } from "./app.ts";

export type { RunningServer };

/** Starts the crew API on host:port (port 0 picks a free one). */
export async function startApi(deps: ApiDeps & { host?: string; port: number }): Promise<RunningServer> {
  const app = createApp(deps);
  const { server, url, stop } = await listen(app, deps.host ?? "0.0.0.0", deps.port);
  server.keepAliveTimeout = 65_000;
  return { url, stop };
}
