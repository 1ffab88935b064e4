import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedHook {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver as a user runs one: records each POST, or answers 503 while `failNext` is above 0. */
export interface WebhookReceiver {
  url: string;
  hooks: ReceivedHook[];
  failNext: number;
  close(): void;
}

/** Listens on `host` (loopback for the suite's own controller; the host's address as an installed cluster reaches it). */
export async function startWebhookReceiver(host = "127.0.0.1"): Promise<WebhookReceiver> {
  const hooks: ReceivedHook[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (receiver.failNext > 0) {
        receiver.failNext--;
        res.writeHead(503).end();
        return;
      }
      hooks.push({ path: req.url ?? "", headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const receiver: WebhookReceiver = {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    hooks,
    failNext: 0,
    close: () => server.close(),
  };
  return receiver;
}
