import type { IncomingMessage, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** What express leaves on a request it routed: the route matched (its path as written) and the mount's path. */
type RoutedRequest = IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
/** A request no route answered (a 404, a static file of the console): one series, not one per path. */
export const UNMATCHED = "unmatched";

/**
 * The crew API's Prometheus metrics, on a registry of its own: its requests by route template (never a raw path:
 * ids and crew names would make a series each), method and status; how long they took; kickoffs by crew; the event
 * streams open. The process's own metrics (CPU, memory, event loop) carry the same `kubecrew_api_` prefix.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"route" | "method" | "status">;
  private readonly duration: Histogram<"route" | "method">;
  private readonly kickoffs: Counter<"crew">;
  private readonly streams: Gauge;
  /** The app's mount paths (`/crews/:crew`, `/console`), to name a routed request's mount by its template. */
  private readonly mounts: { pattern: RegExp; template: string }[];
  /** The status route's cache answers most requests: its series, looked up once. */
  private readonly cachedStatus: { requests: Counter.Internal; duration: Histogram.Internal<"route" | "method"> };

  constructor(options: { mounts: readonly string[]; statusRoute: string }) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "kubecrew_api_" });
    this.requests = new Counter({
      name: "kubecrew_api_requests_total",
      help: "Requests the crew API answered, by route template, method and HTTP status",
      labelNames: ["route", "method", "status"],
      registers,
    });
    this.duration = new Histogram({
      name: "kubecrew_api_request_duration_seconds",
      help: "Time from a request's arrival to the end of its answer (an event stream: its whole life), by route template and method",
      labelNames: ["route", "method"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.kickoffs = new Counter({
      name: "kubecrew_api_kickoffs_total",
      help: "Executions started through POST /kickoff, by crew (an idempotent replay not counted)",
      labelNames: ["crew"],
      registers,
    });
    this.streams = new Gauge({
      name: "kubecrew_api_event_streams",
      help: "Event streams (GET /status/{id}/events) open now",
      registers,
    });
    this.mounts = options.mounts.map((template) => ({
      pattern: new RegExp(`^${template.replace(/:\w+/g, "[^/]+")}$`, "i"),
      template,
    }));
    this.cachedStatus = {
      requests: this.requests.labels(options.statusRoute, "GET", "200"),
      duration: this.duration.labels(options.statusRoute, "GET"),
    };
  }

  /** A poll the status route's cache answered before routing (a 200, at once): `startedAt` from performance.now(). */
  statusAnswered(startedAt: number): void {
    this.cachedStatus.requests.inc();
    this.cachedStatus.duration.observe((performance.now() - startedAt) / 1000);
  }

  /** Follows a request the app answers: counted when its answer ends or its connection closes. */
  track(req: IncomingMessage, res: ServerResponse, startedAt: number): void {
    res.once("close", () => {
      const route = this.routeOf(req as RoutedRequest);
      const method = METHODS.has(req.method ?? "") ? req.method! : "other";
      this.requests.inc({ route, method, status: String(res.statusCode) });
      this.duration.observe({ route, method }, (performance.now() - startedAt) / 1000);
    });
  }

  /** An execution started through a kickoff. */
  kickedOff(crew: string): void {
    this.kickoffs.inc({ crew });
  }

  /** An event stream opened; call what it answers once it ends. */
  streamOpened(): () => void {
    this.streams.inc();
    let open = true;
    return () => {
      if (open) this.streams.dec();
      open = false;
    };
  }

  /**
   * The template of the route that answered: the mount's (a mount with parameters by its template) and the route's
   * path as written (the first spelling of a route with several). A request whose error left its router is named by
   * its route alone (express restores the mount path as the error leaves it).
   */
  private routeOf(req: RoutedRequest): string {
    const path = req.route?.path;
    const own = typeof path === "string" ? path : Array.isArray(path) && typeof path[0] === "string" ? path[0] : "";
    if (!own) return UNMATCHED;
    const base = req.baseUrl ?? "";
    if (!base) return own;
    const mount = this.mounts.find((m) => m.pattern.test(base));
    return mount ? `${mount.template}${own === "/" ? "" : own}` : UNMATCHED;
  }
}
