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

/** One request to a loopback server, any method and raw path; the whole answer, or a rejection after 10 s. */
export function send(base: string, req: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, ...(req.body ? { "content-length": String(req.body.length) } : {}) };
    const r = request(`${base}${req.path}`, { method: req.method, headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    r.on("timeout", () => r.destroy(new Error(`no answer within 10 s: ${req.method} ${req.path}`)));
    r.on("error", reject);
    r.end(req.body);
  });
}
