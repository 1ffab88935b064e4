import { timingSafeEqual } from "node:crypto";
import * as client from "openid-client";
import type { Logger } from "../core/logger.ts";
import type { IntegrationsConfig } from "./config.ts";
import type { ConnectionStore, ProviderAccount } from "./connection-store.ts";
import type { ConnectRequest, SignInStore } from "./connect-sessions.ts";
import { badRequest, forbidden, invalidState, providerNotConfigured } from "./errors.ts";
import type { OAuthClients } from "./oauth-clients.ts";
import { organisationViolation } from "./organisation-restriction.ts";
import { providerFailure } from "./provider-errors.ts";
import type { ProductSettings, ProviderSettings } from "./provider-settings.ts";
import { isAllowedReturnUrl, withOutcome } from "./return-url.ts";
import type { SignInCookie } from "./sign-in-cookie.ts";
import { tokensFromResponse } from "./token-response.ts";

export interface SignInDeps {
  config: IntegrationsConfig;
  signIns: SignInStore;
  connections: ConnectionStore;
  clients: OAuthClients;
  logger: Logger;
  now: () => Date;
}

/** The redirect URI registered at the provider: exactly `<public URL>/v1/auth/<provider>/callback`. */
export function redirectUri(publicUrl: URL, provider: string): string {
  return `${publicUrl.href.replace(/\/+$/, "")}/v1/auth/${encodeURIComponent(provider)}/callback`;
}

/** Salesforce answers the org's API origin as `instance_url`; kept only when it is an http(s) origin. */
function instanceUrlOf(response: object): { instanceUrl?: string } {
  const raw = (response as { instance_url?: unknown }).instance_url;
  if (typeof raw !== "string" || !URL.canParse(raw)) return {};
  const url = new URL(raw);
  return url.protocol === "https:" || url.protocol === "http:" ? { instanceUrl: url.origin } : {};
}

export function configuredProduct(
  config: IntegrationsConfig,
  providerId: string,
  productId: string,
): { provider: ProviderSettings; product: ProductSettings } {
  const provider = config.providers.get(providerId);
  if (!provider) throw providerNotConfigured(providerId);
  const product = provider.products.get(productId);
  if (!product) throw providerNotConfigured(providerId, productId);
  return { provider, product };
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export function createSignIn(deps: SignInDeps) {
  const { config, signIns, connections, clients, logger, now } = deps;
  const ttl = config.connectSessionTtlSeconds;

  return {
    /** Internal API: a one-time link the user's browser opens to connect a product. */
    async createConnectSession(request: ConnectRequest): Promise<{ id: string; url: string; expiresAt: string }> {
      configuredProduct(config, request.provider, request.product);
      if (!isAllowedReturnUrl(request.returnUrl, config.allowedReturnHosts)) {
        throw badRequest(
          `returnUrl must be an absolute http(s) URL on an allowed host (${config.allowedReturnHosts.join(", ")})`,
        );
      }
      const id = await signIns.createConnectSession(request, ttl);
      return {
        id,
        url: `${config.publicUrl.href.replace(/\/+$/, "")}/v1/connect/${id}`,
        expiresAt: new Date(now().getTime() + ttl * 1000).toISOString(),
      };
    },

    /** The browser opened its connect link: remember a one-time state, and send it to the provider with PKCE S256. */
    async start(sessionId: string): Promise<{ authorizationUrl: string; cookie: SignInCookie }> {
      const session = await signIns.takeConnectSession(sessionId);
      if (!session)
        throw badRequest(
          "This connect link has expired or was already used. Start connecting again from the application.",
        );
      const { provider, product } = configuredProduct(config, session.provider, session.product);
      const configuration = await clients.configuration(provider, product).catch((error: unknown) => {
        throw providerFailure(error, provider.displayName, "start the sign-in");
      });
      const state = client.randomState();
      const codeVerifier = client.randomPKCECodeVerifier();
      const openid = product.scopes.includes("openid");
      const nonce = openid ? client.randomNonce() : undefined;
      await signIns.savePendingSignIn(state, { ...session, ...(nonce ? { nonce } : {}) }, ttl);
      const authorizationUrl = client.buildAuthorizationUrl(configuration, {
        ...provider.authorizationParams,
        redirect_uri: redirectUri(config.publicUrl, provider.id),
        response_type: "code",
        ...(product.scopes.length > 0 ? { scope: product.scopes.join(" ") } : {}),
        state,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: "S256",
        ...(nonce ? { nonce } : {}),
      });
      logger.info({ userId: session.userId, provider: provider.id, product: product.product }, "Sign-in started");
      return {
        authorizationUrl: authorizationUrl.href,
        cookie: { state, codeVerifier, ...(nonce ? { nonce } : {}), expiresAt: now().getTime() + ttl * 1000 },
      };
    },

    /**
     * The provider sent the browser back. The state must match the signed cookie and be unused; then the code is
     * exchanged (PKCE), the ID token validated and checked against the organisation restriction, and the tokens stored.
     * Returns where to send the browser.
     */
    async complete(
      providerId: string,
      query: URLSearchParams,
      cookie: SignInCookie | undefined,
    ): Promise<{ location: string }> {
      const configured = config.providers.get(providerId);
      if (!configured || configured.products.size === 0) throw providerNotConfigured(providerId);
      const state = query.get("state");
      if (!state)
        throw invalidState("The sign-in response carries no state. Start connecting again from the application.");
      if (!cookie)
        throw invalidState(
          "The sign-in cookie is missing or expired (was the sign-in started in this browser?). Start connecting again.",
        );
      if (!safeEqual(cookie.state, state))
        throw invalidState("The sign-in state does not match this browser's sign-in. Start connecting again.");
      const pending = await signIns.takePendingSignIn(state);
      if (!pending)
        throw invalidState("This sign-in response was already used or has expired. Start connecting again.");
      if (pending.provider !== providerId)
        throw invalidState("The sign-in response arrived for a different provider. Start connecting again.");
      if ((cookie.nonce ?? undefined) !== (pending.nonce ?? undefined))
        throw invalidState("The sign-in cookie does not belong to this sign-in.");

      const { provider, product } = configuredProduct(config, pending.provider, pending.product);
      const log = logger.child({ userId: pending.userId, provider: provider.id, product: product.product });
      // The return URL was allow-listed when the session was created; check again so a changed list applies.
      if (!isAllowedReturnUrl(pending.returnUrl, config.allowedReturnHosts))
        throw badRequest("The return URL of this sign-in is no longer allowed.");

      const providerError = query.get("error");
      if (providerError) {
        log.info({ error: providerError }, "Provider reported a sign-in error");
        return {
          location: withOutcome(pending.returnUrl, {
            status: "error",
            error: providerError,
            provider: provider.id,
            product: product.product,
          }),
        };
      }

      const configuration = await clients.configuration(provider, product).catch((error: unknown) => {
        throw providerFailure(error, provider.displayName, "complete the sign-in");
      });
      // The provider redirected to the public URL; rebuild it from configuration, not from this request's path,
      // so it matches the registered redirect URI behind a prefix-stripping proxy.
      const callbackUrl = new URL(redirectUri(config.publicUrl, provider.id));
      callbackUrl.search = query.toString();
      const response = await client
        .authorizationCodeGrant(configuration, callbackUrl, {
          pkceCodeVerifier: cookie.codeVerifier,
          expectedState: state,
          ...(pending.nonce ? { expectedNonce: pending.nonce } : {}),
        })
        .catch((error: unknown) => {
          throw providerFailure(error, provider.displayName, "complete the sign-in");
        });
      const claims = response.claims() as Record<string, unknown> | undefined;

      const violation = organisationViolation(provider, claims);
      if (violation) {
        log.warn(
          { hd: claims?.["hd"], tid: claims?.["tid"] },
          "Sign-in refused: account outside the allowed organisation",
        );
        await revokeQuietly(configuration, response.refresh_token ?? response.access_token);
        throw forbidden(violation);
      }

      const tokens = tokensFromResponse(response, product.scopes, now(), provider.assumedAccessTokenLifetimeSeconds);
      const account: ProviderAccount = {
        ...(typeof claims?.sub === "string" ? { subject: claims.sub } : {}),
        ...(typeof claims?.["email"] === "string" ? { email: claims["email"] } : {}),
        ...(typeof claims?.["hd"] === "string" ? { hostedDomain: claims["hd"] } : {}),
        ...(typeof claims?.["tid"] === "string" ? { tenantId: claims["tid"] } : {}),
        ...instanceUrlOf(response),
      };
      const connection = await connections.saveSignIn({
        userId: pending.userId,
        provider: provider.id,
        product: product.product,
        account,
        tokens,
      });
      log.info({ connectionId: connection.id, hasRefreshToken: connection.hasRefreshToken }, "Connection stored");
      return {
        location: withOutcome(pending.returnUrl, {
          status: "connected",
          connection_id: connection.id,
          provider: provider.id,
          product: product.product,
        }),
      };
    },
  };

  async function revokeQuietly(configuration: client.Configuration, token: string): Promise<void> {
    if (!configuration.serverMetadata().revocation_endpoint) return;
    await client.tokenRevocation(configuration, token).catch((error: unknown) => {
      logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        "Could not revoke the refused sign-in's token",
      );
    });
  }
}
export type SignIn = ReturnType<typeof createSignIn>;
