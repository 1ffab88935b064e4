import http from "node:http";
import https from "node:https";
import type { KubeAccess } from "./kubeconfig.ts";

/**
 * A small REST client for the Kubernetes API: raw paths, explicit content types (JSON merge patch on /status),
 * streaming watches, and a count of the writes it made (for metrics and benchmarks).
 * The generated client of @kubernetes/client-node hides the patch content type and the watch stream; this does not.
 */

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface KubeList<T> {
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

export interface WatchEvent<T> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: T;
}

/** A failed API call, with the HTTP status and the apiserver's Status reason (NotFound, AlreadyExists, Conflict, ...). */
export class KubeApiError extends Error {
  readonly statusCode: number;
  readonly reason: string;
  constructor(statusCode: number, reason: string, message: string) {
    super(message);
    this.name = "KubeApiError";
    this.statusCode = statusCode;
    this.reason = reason;
  }
}

export const isNotFound = (err: unknown) => err instanceof KubeApiError && err.statusCode === 404;
export const isAlreadyExists = (err: unknown) =>
  err instanceof KubeApiError && err.statusCode === 409 && err.reason === "AlreadyExists";
export const isConflict = (err: unknown) => err instanceof KubeApiError && err.statusCode === 409;
export const isGone = (err: unknown) => err instanceof KubeApiError && err.statusCode === 410;

/** The requests the reconcilers make (a recording client stands in for it in unit tests). */
export type KubeApi = Pick<KubeClient, "get" | "list" | "create" | "mergePatch" | "delete" | "deleteCollection">;

export type WriteVerb = "create" | "patch" | "update" | "delete";

export interface KubeClientOptions {
  /** Called after every write the apiserver accepted (for metrics and the benchmark's write count). */
  onWrite?: (verb: WriteVerb, path: string) => void;
  /** Called when a request (not a watch) was answered or failed: its method, path, HTTP status (0: no answer), time. */
  onResponse?: (method: string, path: string, statusCode: number, ms: number) => void;
  /** Per-request timeout for non-watch calls. */
  timeoutMs?: number;
  /** Connections to the apiserver at most (HTTP/1.1: one request each at a time); 64 unless given. */
  maxSockets?: number;
}

interface ConnectionOptions {
  base: URL;
  agent: http.Agent;
  headers: Record<string, string>;
  auth?: string;
  loadedAt: number;
}

const REFRESH_MS = 60_000;

/**
 * An https.Agent for one apiserver with one set of TLS material (KubeClient makes a new one when they change). Its
 * pools are named as an http.Agent names them (host, port, local address), not as https.Agent does: that name
 * appends every TLS option, the CA, the client certificate and its key included, several KB of text built and
 * hashed three times per request (add, free, remove) for pools that can only ever be one.
 */
class ApiserverAgent extends https.Agent {
  override getName(options?: https.RequestOptions): string {
    return http.Agent.prototype.getName.call(this, options);
  }
}

export class KubeClient {
  readonly kubeConfig: KubeAccess;
  private readonly options: KubeClientOptions;
  private connection: ConnectionOptions | undefined;
  private readonly agents: http.Agent[] = [];

  constructor(kubeConfig: KubeAccess, options: KubeClientOptions = {}) {
    this.kubeConfig = kubeConfig;
    this.options = options;
  }

  /** TLS material and credentials, reloaded now and then so rotated tokens are picked up. */
  private async connect(): Promise<ConnectionOptions> {
    if (this.connection && Date.now() - this.connection.loadedAt < REFRESH_MS) return this.connection;
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster");
    const opts: https.RequestOptions = { headers: {} };
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const base = new URL(cluster.server);
    const previous = this.connection;
    const sameTls = previous && previous.base.href === base.href;
    const agent =
      sameTls && previous
        ? previous.agent
        : base.protocol === "https:"
          ? new ApiserverAgent({
              keepAlive: true,
              maxSockets: this.options.maxSockets ?? 64,
              ca: opts.ca,
              cert: opts.cert,
              key: opts.key,
              ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
              ...(opts.servername ? { servername: opts.servername } : {}),
            })
          : new http.Agent({ keepAlive: true, maxSockets: this.options.maxSockets ?? 64 });
    if (agent !== previous?.agent) this.agents.push(agent);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = String(v);
    this.connection = { base, agent, headers, ...(opts.auth ? { auth: opts.auth } : {}), loadedAt: Date.now() };
    return this.connection;
  }

  private async send(
    method: string,
    path: string,
    body: unknown,
    contentType: string,
    signal?: AbortSignal,
    timeoutMs?: number,
  ): Promise<http.IncomingMessage> {
    const conn = await this.connect();
    const url = new URL(conn.base.pathname.replace(/\/$/, "") + path, conn.base);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const lib = url.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      const req = lib.request(
        url,
        {
          method,
          agent: conn.agent,
          headers: {
            ...conn.headers,
            Accept: "application/json",
            ...(payload ? { "Content-Type": contentType, "Content-Length": String(payload.length) } : {}),
          },
          ...(conn.auth ? { auth: conn.auth } : {}),
          ...(signal ? { signal } : {}),
        },
        (res) => {
          // An aborted watch errors its response after the reader let go; readers see errors through iteration.
          res.on("error", () => undefined);
          resolve(res);
        },
      );
      req.on("error", reject);
      if (timeoutMs) {
        req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs}ms`)));
      }
      req.end(payload);
    });
  }

  async request<T>(method: string, path: string, body?: unknown, contentType = "application/json"): Promise<T> {
    const started = performance.now();
    let text: string;
    let status: number;
    try {
      const res = await this.send(method, path, body, contentType, undefined, this.options.timeoutMs ?? 30_000);
      text = await responseText(res);
      status = res.statusCode ?? 0;
    } catch (err) {
      this.options.onResponse?.(method, path, 0, performance.now() - started);
      throw err;
    }
    this.options.onResponse?.(method, path, status, performance.now() - started);
    if (status < 200 || status >= 300) {
      let reason = "Unknown";
      let message = text.slice(0, 500);
      try {
        const parsed = JSON.parse(text) as { reason?: string; message?: string };
        reason = parsed.reason ?? reason;
        message = parsed.message ?? message;
      } catch {
        // not a Status object; keep the raw text
      }
      throw new KubeApiError(status, reason, `${method} ${path}: ${status} ${message}`);
    }
    if (method !== "GET") this.options.onWrite?.(writeVerb(method), path);
    return (text ? JSON.parse(text) : {}) as T;
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>("GET", path);
  }

  list<T>(path: string, query: Record<string, string | undefined> = {}): Promise<KubeList<T>> {
    return this.request<KubeList<T>>("GET", path + queryString(query));
  }

  create<T>(path: string, body: T): Promise<T> {
    return this.request<T>("POST", path, body);
  }

  /** RFC 7386 JSON merge patch (custom resources reject strategic merge patch). */
  mergePatch<T>(path: string, patch: unknown): Promise<T> {
    return this.request<T>("PATCH", path, patch, "application/merge-patch+json");
  }

  replace<T>(path: string, body: T): Promise<T> {
    return this.request<T>("PUT", path, body);
  }

  delete(
    path: string,
    options: { propagationPolicy?: "Background" | "Foreground" | "Orphan"; uid?: string } = {},
  ): Promise<unknown> {
    return this.request("DELETE", path, {
      apiVersion: "v1",
      kind: "DeleteOptions",
      ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
      ...(options.uid ? { preconditions: { uid: options.uid } } : {}),
    });
  }

  /** Deletes every object of a collection that matches the label selector. */
  deleteCollection(
    path: string,
    labelSelector: string,
    propagationPolicy?: "Background" | "Foreground" | "Orphan",
  ): Promise<unknown> {
    return this.request("DELETE", path + queryString({ labelSelector }), {
      apiVersion: "v1",
      kind: "DeleteOptions",
      ...(propagationPolicy ? { propagationPolicy } : {}),
    });
  }

  /**
   * Opens a watch and calls onEvent per event; resolves when the stream ends (the server closed it, `signal` aborted
   * it, or onEvent answered "stop") and rejects on a failed request. A non-200 answer rejects with a KubeApiError (410 when expired).
   */
  async watch<T>(
    path: string,
    query: Record<string, string | undefined>,
    onEvent: (event: WatchEvent<T>) => void | "stop",
    signal: AbortSignal,
  ): Promise<void> {
    const res = await this.send("GET", path + queryString({ ...query, watch: "true" }), undefined, "", signal);
    if (res.statusCode !== 200) {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      let reason = "Unknown";
      try {
        reason = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { reason?: string }).reason ?? reason;
      } catch {
        // keep Unknown
      }
      throw new KubeApiError(res.statusCode ?? 0, reason, `watch ${path}: ${res.statusCode}`);
    }
    let buffered = "";
    try {
      for await (const chunk of res) {
        buffered += (chunk as Buffer).toString("utf8");
        let newline = buffered.indexOf("\n");
        while (newline >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line && onEvent(JSON.parse(line) as WatchEvent<T>) === "stop") {
            res.destroy();
            return;
          }
          newline = buffered.indexOf("\n");
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
  }

  close(): void {
    for (const agent of this.agents) agent.destroy();
  }
}

/** A response's whole body, read with events (an async iterator costs a promise per chunk on every request). */
function responseText(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (chunk: Buffer) => chunks.push(chunk));
    res.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    res.once("error", reject);
    res.once("close", () => {
      if (!res.complete) reject(new Error("the apiserver's answer ended before its end"));
    });
  });
}

function writeVerb(method: string): WriteVerb {
  if (method === "POST") return "create";
  if (method === "PATCH") return "patch";
  if (method === "PUT") return "update";
  return "delete";
}

function queryString(query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
  const s = params.toString();
  return s ? `?${s}` : "";
}
