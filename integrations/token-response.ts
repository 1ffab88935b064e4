import type * as client from "openid-client";
import type { ProviderTokens } from "./connection-store.ts";

/** The tokens to store from a token endpoint response; scopes fall back to those requested when the provider omits them. */
export function tokensFromResponse(
  response: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
  requestedScopes: string[],
  now: Date,
  assumedLifetimeSeconds?: number,
): ProviderTokens {
  const expiresIn = response.expiresIn() ?? assumedLifetimeSeconds;
  return {
    accessToken: response.access_token,
    ...(response.refresh_token ? { refreshToken: response.refresh_token } : {}),
    tokenType: response.token_type ?? "bearer",
    expiresAt: expiresIn !== undefined ? new Date(now.getTime() + expiresIn * 1000) : null,
    scopes: response.scope ? response.scope.split(" ").filter(Boolean) : requestedScopes,
  };
}
