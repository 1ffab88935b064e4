import express, { Router, type ErrorRequestHandler, type Request, type Response } from "express";
import type { Logger } from "../../core/logger.ts";
import { requestFault } from "../../platform/http/request-faults.ts";
import { TokenStoreUnavailable, type ManagedTokenStore } from "../auth/token-store.ts";
import { basicClientCredentials, type ClientCredentials } from "./basic-credentials.ts";
import {
  invalidClient,
  invalidRequest,
  OAuthError,
  rateLimited,
  storeUnavailable,
  unsupportedGrantType,
} from "./oauth-error.ts";
import { sourceAddressKey } from "./source-address.ts";
import type { Admission, TokenRateLimiter } from "./token-rate-limiter.ts";

export interface TokenEndpointDeps {
  store: ManagedTokenStore;
  limiter: TokenRateLimiter;
  /** `expires_in` of the access tokens issued. */
  accessTokenTtlSeconds: number;
  /** The realm in `WWW-Authenticate: Basic realm="…"`. */
  realm: string;
  log: Logger;
}

const formType = "application/x-www-form-urlencoded";

/** Token responses are credentials: never cached, by the client or anything in between (RFC 6749 §5.1). */
function sendTokenResponse(res: Response, status: number, body: object, headers: Record<string, string> = {}) {
  res
    .status(status)
    .set({ ...headers, "Cache-Control": "no-store", Pragma: "no-cache" })
    .json(body);
}

function refuseIfLimited(admission: Admission): void {
  if (!admission.admitted) throw rateLimited(admission.retryAfterSeconds);
}

/** The form parameters, each at most once (RFC 6749 §3.2); an empty value counts as absent (§3.1). */
function formParameters(body: unknown): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(typeof body === "string" ? body : "")) {
    if (params.has(name)) throw invalidRequest(`Parameter ${name} is repeated`);
    params.set(name, value);
  }
  for (const [name, value] of params) if (value === "") params.delete(name);
  return params;
}

/**
 * The client credentials of a well-formed client_credentials token request; throws the OAuth error otherwise:
 * invalid_request (not a form, a repeated parameter, no grant_type, two authentication methods),
 * unsupported_grant_type, or invalid_client (no or malformed HTTP Basic credentials).
 */
function clientCredentialsRequest(req: Request, realm: string): ClientCredentials {
  if (!req.is(formType)) throw invalidRequest(`Send the parameters as ${formType}`);
  const params = formParameters(req.body);
  const grantType = params.get("grant_type");
  if (!grantType) throw invalidRequest("grant_type is missing");
  if (grantType !== "client_credentials") throw unsupportedGrantType(grantType);

  const credentials = basicClientCredentials(req.headers.authorization);
  if (params.has("client_secret")) {
    throw credentials
      ? invalidRequest("Use one client authentication method: HTTP Basic, not also client_secret in the body")
      : invalidClient(realm, "Authenticate the client with HTTP Basic");
  }
  if (!credentials) {
    throw invalidClient(
      realm,
      req.headers.authorization ? "Malformed Basic credentials" : "Client authentication is missing",
    );
  }
  const bodyClientId = params.get("client_id");
  if (bodyClientId !== undefined && bodyClientId !== credentials.clientId) {
    throw invalidRequest("client_id in the body differs from the authenticated client");
  }
  return credentials;
}

/**
 * `POST /oauth/token`: the OAuth 2.0 client credentials grant (RFC 6749 §4.4) for service accounts, with HTTP Basic
 * client authentication. A Router, so the crew API serves it at `/oauth/token` and an auth host can mount it under
 * its own `{auth_url}` (`app.use(prefix, tokenEndpoint(...))`; set `trust proxy` there too when behind an Ingress).
 */
export function tokenEndpoint(deps: TokenEndpointDeps): Router {
  const { store, limiter, realm, log } = deps;
  const router = Router();

  router.post("/oauth/token", express.text({ type: formType, limit: "16kb" }), async (req: Request, res) => {
    const address = sourceAddressKey(req.ip);
    let credentials: ClientCredentials;
    try {
      credentials = clientCredentialsRequest(req, realm);
    } catch (err) {
      // Refused requests count against their address too, so a flood of them is limited like any other.
      refuseIfLimited(await limiter.admitAddress(address));
      if (err instanceof OAuthError && err.error === "invalid_client") await limiter.failedAuthentication(address);
      throw err;
    }

    // The address's limits and the client lookup in one round trip to Redis. The lookup's answer is used only when
    // both limits admit the request: a refused guess learns nothing, whether or not it was right.
    const [byAddress, byClientAtAddress, client] = await Promise.all([
      limiter.admitAddress(address),
      limiter.admitClientAt(credentials.clientId, address),
      store.authenticateClient(credentials.clientId, credentials.clientSecret),
    ]);
    refuseIfLimited(byAddress);
    refuseIfLimited(byClientAtAddress);
    if (!client) {
      await limiter.failedAuthentication(address, credentials.clientId);
      log.warn({ clientId: credentials.clientId, address }, "Client authentication failed at the token endpoint");
      throw invalidClient(realm);
    }
    // The client's own budget counts only requests that proved to be its own.
    refuseIfLimited(await limiter.admitClient(client.clientId));
    const issued = await store.issueAccessToken(client, deps.accessTokenTtlSeconds);
    if (!issued) throw invalidClient(realm); // revoked between authentication and issue
    log.info({ clientId: client.clientId, tokenId: issued.record.id }, "Access token issued");
    sendTokenResponse(res, 200, {
      access_token: issued.token,
      token_type: "Bearer",
      expires_in: deps.accessTokenTtlSeconds,
    });
  });

  router.all("/oauth/token", (_req, res) => {
    sendTokenResponse(res, 405, invalidRequest("Use POST").body, { Allow: "POST" });
  });

  router.use(tokenErrorHandler(log));
  return router;
}

/** Every failure of the token endpoint answers in RFC 6749 §5.2 form, uncached. */
function tokenErrorHandler(log: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const type = (err as { type?: string } | null)?.type;
    let answer: OAuthError;
    const fault = requestFault(err, req.headers["content-encoding"]);
    if (err instanceof OAuthError) answer = err;
    else if (fault) answer = invalidRequest(fault.message);
    else if (err instanceof TokenStoreUnavailable) {
      log.warn({ reason: (err.cause as Error | undefined)?.message }, "Token endpoint: store unavailable");
      answer = storeUnavailable();
    } else if (type === "entity.too.large") answer = invalidRequest("The request body is too large");
    else if (typeof type === "string" && type.endsWith(".unsupported"))
      answer = invalidRequest("Unsupported body encoding");
    else {
      log.error({ err, path: req.path }, "Unexpected error at the token endpoint");
      answer = new OAuthError(500, "server_error", "An unexpected error occurred");
    }
    sendTokenResponse(res, answer.status, answer.body, answer.headers);
  };
}
