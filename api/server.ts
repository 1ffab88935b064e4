import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createApp, type ApiDeps } from "./app.ts";

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * Serves `handler` (an express app or a plain request listener) on host:port (port 0 picks a free one) once it
 * listens; the url names 127.0.0.1 when bound to every address. stop() closes the server and its open connections.
 */
export async function listen(
  handler: RequestListener,
  host: string,
  port: number,
): Promise<RunningServer & { server: Server }> {
  const server = createServer(handler);
  server.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const address = server.address() as AddressInfo;
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return {
    server,
    url: `http://${shown}:${address.port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Starts the crew API on host:port (port 0 picks a free one). */
export async function startApi(deps: ApiDeps & { host?: string; port: number }): Promise<RunningServer> {
  const { server, url, stop } = await listen(createApp(deps), deps.host ?? "0.0.0.0", deps.port);
  server.keepAliveTimeout = 65_000;
  return { url, stop };
}
