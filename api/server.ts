import type { AddressInfo } from "node:net";
import { createApp, type ApiDeps } from "./app.ts";

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts the crew API on host:port (port 0 picks a free one). */
export async function startApi(deps: ApiDeps & { host?: string; port: number }): Promise<RunningServer> {
  const app = createApp(deps);
  const server = app.listen(deps.port, deps.host ?? "0.0.0.0");
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  server.keepAliveTimeout = 65_000;
  const { port } = server.address() as AddressInfo;
  const host = deps.host && deps.host !== "0.0.0.0" ? deps.host : "127.0.0.1";
  return {
    url: `http://${host}:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
