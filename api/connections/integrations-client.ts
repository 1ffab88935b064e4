import { DependencyUnavailable } from "../../core/errors.ts";
import type { Fetch } from "../../platform/outbound/outbound-fetch.ts";
import { KubecrewError } from "../../core/errors.ts";

/** The integrations service's internal API as the crew API uses it: a user's connections, connect links, deletes. */
export interface IntegrationsSettings {
  /**
   * Base URL (e.g. `http://kubecrew-integrations.kubecrew.svc:80`); a function when it is known only once a server
   * listens (`kubecrew dev` serves the service itself, at its own port's `/oauthsvc`).
   */
  url: string | (() => string);
  /** KUBECREW_OAUTH_INTERNAL_API_KEY. */
  internalApiKey: string;
}

/** A connection as the integrations service lists it (never a token). */
export interface IntegrationsConnection {
  id: string;
  provider: string;
  product: string;
  scopes: string[];
  account: { email?: string | null };
  status: string;
}

/** The integrations service could not be reached, did not answer in time, or failed. */
export class IntegrationsUnavailable extends DependencyUnavailable {
  override name = "IntegrationsUnavailable";

  constructor(message: string, options: { cause?: unknown } = {}) {
    super("integrations service", message, {
      ...options,
      answer: "The integrations service is unavailable; try again shortly",
    });
  }
}

/** The integrations service refused the request with a 4xx: its status and `{error, message}`. */
export class IntegrationsRefused extends KubecrewError {
  readonly code = "integrations_refused";
  override name = "IntegrationsRefused";
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Each call gives up after this long: a hung integrations service is a fast 503, not a hung request. */
const TIMEOUT_MS = 3_000;

export class IntegrationsClient {
  private readonly settings: IntegrationsSettings;
  private readonly fetch: Fetch;

  constructor(settings: IntegrationsSettings, fetch: Fetch) {
    this.settings = settings;
    this.fetch = fetch;
  }

  private get base(): string {
    const { url } = this.settings;
    return (typeof url === "string" ? url : url()).replace(/\/+$/, "");
  }

  async connections(userId: string): Promise<IntegrationsConnection[]> {
    const body = await this.call("GET", `/v1/internal/users/${encodeURIComponent(userId)}/connections`);
    return (body as { connections: IntegrationsConnection[] }).connections;
  }

  async connectSession(request: { userId: string; provider: string; product: string; returnUrl: string }) {
    return (await this.call("POST", "/v1/internal/connect-sessions", request)) as { url: string; expiresAt: string };
  }

  async deleteConnection(id: string): Promise<void> {
    await this.call("DELETE", `/v1/internal/connections/${encodeURIComponent(id)}`);
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    let res: Response;
    try {
      res = await this.fetch(`${this.base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.settings.internalApiKey}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw new IntegrationsUnavailable(`the integrations service cannot be reached (${(error as Error).name})`, {
        cause: error,
      });
    }
    const text = await res.text().catch(() => "");
    if (res.status >= 500 || res.status === 401) {
      // 401: this API's internal key is not the service's, an installation problem the user cannot fix.
      throw new IntegrationsUnavailable(`the integrations service answered HTTP ${res.status}`);
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      throw new IntegrationsUnavailable(`the integrations service answered HTTP ${res.status} without JSON`);
    }
    if (!res.ok) {
      const message = (parsed as { message?: unknown }).message;
      throw new IntegrationsRefused(res.status, typeof message === "string" ? message : `HTTP ${res.status}`);
    }
    return parsed;
  }
}
