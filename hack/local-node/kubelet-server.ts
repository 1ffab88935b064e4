import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";

export interface LogSource {
  /** The log file of a container of the pod <namespace>/<name>, and whether it can still grow. */
  find(
    namespace: string,
    pod: string,
    container: string | undefined,
  ): { file: string; live: () => boolean } | undefined;
}

/** The last `lines` lines of `text` (all of it for a negative count). */
export function tailLines(text: string, lines: number): string {
  if (lines < 0) return text;
  if (lines === 0) return "";
  const parts = text.split("\n");
  const trailing = parts.at(-1) === "" ? parts.pop() : undefined;
  return parts.slice(-lines).join("\n") + (trailing === undefined ? "" : "\n");
}

/**
 * The piece of the kubelet API the apiserver proxies `kubectl logs` (pods/log) to: GET /containerLogs/<ns>/<pod>/<c>,
 * with tailLines and follow. TLS with a certificate from the cluster CA; callers must present a client certificate
 * signed by that CA (the apiserver does).
 */
export async function startKubeletServer(
  tls: { certFile: string; keyFile: string; ca: Buffer },
  logs: LogSource,
): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer(
    {
      cert: readFileSync(tls.certFile),
      key: readFileSync(tls.keyFile),
      ca: tls.ca,
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const url = new URL(req.url ?? "/", "https://localhost");
      if (url.pathname === "/healthz") {
        res.end("ok");
        return;
      }
      const match = /^\/containerLogs\/([^/]+)\/([^/]+)(?:\/([^/]+))?$/.exec(url.pathname);
      const found = match && logs.find(match[1]!, match[2]!, match[3]);
      if (!found || !existsSync(found.file)) {
        res.writeHead(404).end("container not found\n");
        return;
      }
      res.writeHead(200, { "Content-Type": "text/plain" });
      const tail = url.searchParams.get("tailLines");
      const follow = url.searchParams.get("follow") === "true";
      let offset = 0;
      if (tail !== null) {
        const text = readFileSync(found.file, "utf8");
        res.write(tailLines(text, Number(tail)));
        offset = Buffer.byteLength(text);
      }
      const pump = () => {
        const size = statSync(found.file).size;
        if (size <= offset) return Promise.resolve();
        return new Promise<void>((resolve) => {
          const stream = createReadStream(found.file, { start: offset, end: size - 1 });
          offset = size;
          stream.on("data", (chunk) => res.write(chunk));
          stream.on("end", () => resolve());
          stream.on("error", () => resolve());
        });
      };
      void (async () => {
        await pump();
        while (follow && found.live() && !res.destroyed) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          await pump();
        }
        await pump();
        res.end();
      })();
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
