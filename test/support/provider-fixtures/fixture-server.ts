import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for a provider's HTTP API. Each route is one operation of the provider's published API description
 * (method, path template, required query parameters and body fields, transcribed per fixture); a request that matches
 * no operation, or lacks a required part, is answered 400/404 as the provider would and recorded as a violation, so a
 * test can assert the SDK called the API the way the provider documents it. Every request's bearer token is recorded.
 */
export interface FixtureRequest {
  operation: string;
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  /** The parsed JSON body, or the raw text for other content types. */
  body: unknown;
  rawBody: string;
  /** The `Authorization: Bearer` token the request carried. */
  token: string | undefined;
}

export interface FixtureAnswer {
  status?: number;
  json?: unknown;
  text?: string;
  /** Raw bytes (e.g. a .docx). */
  bytes?: Buffer;
  contentType?: string;
  /** More response headers (e.g. a redirect's Location). */
  headers?: Record<string, string>;
}

export interface Operation {
  /** The provider's operation id, e.g. `gmail.users.messages.send`. */
  id: string;
  method: string;
  /** `/gmail/v1/users/{userId}/messages/send`; `{name}` matches one segment (percent-decoded), `{+name}` the rest. */
  path: string;
  requiredQuery?: string[];
  /** Headers the API requires (lower case), e.g. Notion's `notion-version`. */
  requiredHeaders?: string[];
  /** Dotted paths into the JSON body that the operation requires, e.g. `message.raw`. */
  requiredBody?: string[];
  answer(request: FixtureRequest): FixtureAnswer | Promise<FixtureAnswer>;
}

/** How the fixture answers a refused call: the provider's error body for a status and message. */
export type ErrorBody = (status: number, message: string) => unknown;

export interface ProviderFixture {
  url: string;
  requests: FixtureRequest[];
  violations: string[];
  /** The next calls of `operation` (any when omitted) are answered with this status and message instead. */
  refuseNext(status: number, message: string, operation?: string): void;
  stop(): Promise<void>;
}

function compile(template: string): { regex: RegExp; names: string[] } {
  const names: string[] = [];
  const source = template.replace(/[.*?^$()|[\]\\]/g, "\\$&").replace(/\{(\+?)([^}]+)\}/g, (_m, plus, name) => {
    names.push(name);
    return plus ? "(.+)" : "([^/]+?)";
  });
  return { regex: new RegExp(`^${source}$`), names };
}

function lookup(body: unknown, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>((v, key) => (v && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined), body);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startProviderFixture(operations: Operation[], errorBody: ErrorBody): Promise<ProviderFixture> {
  const compiled = operations.map((op) => ({ op, ...compile(op.path) }));
  const requests: FixtureRequest[] = [];
  const violations: string[] = [];
  const refusals: { status: number; message: string; operation?: string }[] = [];

  const send = (res: ServerResponse, answer: FixtureAnswer) => {
    const status = answer.status ?? 200;
    const headers = answer.headers ?? {};
    if (answer.bytes !== undefined) {
      res
        .writeHead(status, { "content-type": answer.contentType ?? "application/octet-stream", ...headers })
        .end(answer.bytes);
    } else if (answer.json !== undefined) {
      res
        .writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers })
        .end(JSON.stringify(answer.json));
    } else {
      res
        .writeHead(status, { "content-type": answer.contentType ?? "text/plain; charset=utf-8", ...headers })
        .end(answer.text ?? "");
    }
  };

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://fixture.invalid");
      const rawBody = await readBody(req);
      const match = compiled
        .filter((c) => c.op.method === req.method)
        .map((c) => ({ c, m: c.regex.exec(url.pathname) }))
        .find((x) => x.m);
      if (!match) {
        violations.push(`${req.method} ${url.pathname}: no such operation`);
        return send(res, { status: 404, json: errorBody(404, `No operation for ${req.method} ${url.pathname}`) });
      }
      const { op, names } = match.c;
      const params = Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(match.m![i + 1]!)]));
      const type = req.headers["content-type"] ?? "";
      let body: unknown = rawBody;
      if (type.includes("json") && rawBody) {
        try {
          body = JSON.parse(rawBody);
        } catch {
          violations.push(`${op.id}: body is not JSON`);
          return send(res, { status: 400, json: errorBody(400, "Invalid JSON payload") });
        }
      }
      const auth = req.headers.authorization;
      const token = auth?.toLowerCase().startsWith("bearer ") ? auth.slice(7) : undefined;
      const request: FixtureRequest = {
        operation: op.id,
        method: req.method!,
        path: url.pathname,
        params,
        query: url.searchParams,
        headers: req.headers,
        body,
        rawBody,
        token,
      };
      requests.push(request);
      if (!token)
        return send(res, {
          status: 401,
          json: errorBody(401, "Request is missing required authentication credential"),
        });
      const missing = [
        ...(op.requiredQuery ?? []).filter((q) => !url.searchParams.has(q)).map((q) => `query ${q}`),
        ...(op.requiredHeaders ?? []).filter((h) => req.headers[h] === undefined).map((h) => `header ${h}`),
        ...(op.requiredBody ?? []).filter((p) => lookup(body, p) === undefined).map((p) => `body ${p}`),
      ];
      if (missing.length > 0) {
        violations.push(`${op.id}: missing ${missing.join(", ")}`);
        return send(res, { status: 400, json: errorBody(400, `Missing required ${missing.join(", ")}`) });
      }
      const refusal = refusals.findIndex((r) => r.operation === undefined || r.operation === op.id);
      if (refusal >= 0) {
        const [r] = refusals.splice(refusal, 1);
        return send(res, { status: r!.status, json: errorBody(r!.status, r!.message) });
      }
      send(res, await op.answer(request));
    })().catch((error: unknown) => {
      violations.push(`fixture failure: ${String(error)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    violations,
    refuseNext(status, message, operation) {
      refusals.push({ status, message, ...(operation ? { operation } : {}) });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
