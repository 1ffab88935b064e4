import { Router, type RequestHandler } from "express";
import type { AppsSettings } from "../core/execution-apps.ts";
import type { Logger } from "../core/logger.ts";
import type { IntegrationsSettings } from "../api/connections/integrations-client.ts";
import { configuredProviders, createIntegrationsApp, type IntegrationsApp } from "../integrations/server.ts";
import type { IntegrationsStore } from "../integrations/store.ts";
import {
  EMBEDDED_INTEGRATIONS_PATH,
  withDevUrl,
  type EmbeddedIntegrationsSettings,
} from "./embedded-integrations-config.ts";

/** What the dev server shows of the service it runs: where browsers reach it, which providers can be connected. */
export interface EmbeddedIntegrationsInfo {
  publicUrl: string;
  providers: string[];
  /** The redirect URI to register at a provider, `<provider>` standing for its id. */
  redirectUri: string;
}

/**
 * The integrations service inside `kubecrew dev`, at the dev server's `/oauthsvc` (as a cluster's Ingress serves it on
 * the web host): the console's Apps tab and `/connections` reach its internal API there, the task processes its
 * `/v1/mcp` with their execution's app credential, and the provider sends the browser back to its callback there.
 * The service is built once the dev server listens, when its URL (and so the redirect URIs) is known.
 */
export class EmbeddedIntegrations {
  /** Mounted before the crew routes; until the service is built its paths fall through (nothing listens yet). */
  readonly router: Router;
  readonly store: IntegrationsStore;
  private readonly settings: EmbeddedIntegrationsSettings;
  private readonly log: Logger;
  private readonly inRedis: boolean;
  private service: IntegrationsApp | undefined;
  private base: string | undefined;

  constructor(
    settings: EmbeddedIntegrationsSettings,
    options: { store: IntegrationsStore; log: Logger; inRedis: boolean },
  ) {
    this.settings = settings;
    this.store = options.store;
    this.log = options.log;
    this.inRedis = options.inRedis;
    const mounted: RequestHandler = (req, res, next) => {
      if (!this.service) return next();
      // As express mounts an app: the service's request and response prototypes while it handles the request.
      const [request, response] = [Object.getPrototypeOf(req) as object, Object.getPrototypeOf(res) as object];
      this.service.app(req, res, (err?: unknown) => {
        Object.setPrototypeOf(req, request);
        Object.setPrototypeOf(res, response);
        next(err);
      });
    };
    this.router = Router();
    this.router.use(EMBEDDED_INTEGRATIONS_PATH, mounted);
  }

  /** Builds the service once the dev server listens at devUrl. */
  listening(devUrl: string): EmbeddedIntegrationsInfo {
    const config = withDevUrl(this.settings, devUrl);
    this.base = `${devUrl.replace(/\/+$/, "")}${EMBEDDED_INTEGRATIONS_PATH}`;
    this.service = createIntegrationsApp(config, this.store, { logger: this.log });
    const info = {
      publicUrl: config.publicUrl.href,
      providers: configuredProviders(config),
      redirectUri: `${config.publicUrl.href.replace(/\/+$/, "")}/v1/auth/<provider>/callback`,
    };
    this.log.info(info, "Integrations service (connected apps) at /oauthsvc");
    if (this.inRedis && !this.settings.encryptionKeyGiven)
      this.log.warn(
        "KUBECREW_OAUTH_DB_ENCRYPTION_KEY is not set: connections stored in Redis now cannot be read after a restart",
      );
    return info;
  }

  /** Where the dev server's own clients (the crew API, the task processes) reach the service. */
  private get url(): string {
    if (!this.base) throw new Error("The integrations service is not running yet");
    return this.base;
  }

  /** The crew API's client settings: the internal API at the dev server's /oauthsvc. */
  client(): IntegrationsSettings {
    return { url: () => this.url, internalApiKey: this.settings.internalApiKey };
  }

  /** What task processes of agents with apps are given: /v1/mcp, and the key their credentials are signed with. */
  apps(): AppsSettings {
    return {
      url: `${this.url}/v1/mcp`,
      signingKey: this.settings.appsSigningKey,
      revoke: { integrationsUrl: this.url, internalApiKey: this.settings.internalApiKey },
    };
  }

  async close(): Promise<void> {
    await this.service?.close();
  }
}
