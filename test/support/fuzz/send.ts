import { request } from "node:http";

export interface RawRequest {
  method: string;
  /** Sent as is: malformed %-escapes included (fetch would normalise them). */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** How long a live event stream (text/event-stream) is read: it ends only with its run, which may be queued. */
const STREAM_READ_MS = 1_000;

/**
 * One request to a loopback server, any method and raw path; the whole answer (of an event stream, what it sent in
 * its first second), or a rejection after 10 s.
 */
export function send(base: string, req: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, ...(req.body ? { "content-length": String(req.body.length) } : {}) };
    const r = request(`${base}${req.path}`, { method: req.method, headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      const answer = () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", answer);
      if (String(res.headers["content-type"]).startsWith("text/event-stream")) {
        setTimeout(() => {
          answer();
          r.destroy();
        }, STREAM_READ_MS).unref();
      }
    });
    r.on("timeout", () => r.destroy(new Error(`no answer within 10 s: ${req.method} ${req.path}`)));
    r.on("error", reject);
    r.end(req.body);
  });
}
