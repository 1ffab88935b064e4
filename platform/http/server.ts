import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ListenError } from "./listen-error.ts";

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * Serves `handler` (an express app or a plain request listener) on host:port (port 0 picks a free one) once it
 * listens; the url names 127.0.0.1 when bound to every address. stop() closes the server and its open connections.
 * Every kubecrew HTTP server (the crew API, the integrations service, the controller's health port) starts here.
 * A server that cannot listen (the port taken, an address this machine does not have…) rejects with ListenError,
 * which the commands print as one line.
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
    server.once("error", (err: NodeJS.ErrnoException) => reject(new ListenError(host, port, err)));
  });
  const address = server.address() as AddressInfo;
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
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
