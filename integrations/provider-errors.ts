import * as client from "openid-client";
import { OutboundRefusedError } from "../core/outbound/policy.ts";
import { IntegrationError } from "./errors.ts";

/**
 * Maps a failed call to a provider to what the user or caller should hear: the provider's OAuth error code is safe to
 * show; a network failure is a 502; a response that fails validation (ID token, state, PKCE) is refused.
 */
export function providerFailure(error: unknown, providerName: string, action: string): IntegrationError {
  // openid-client wraps what its fetch threw in a ClientError ("something went wrong"): look through the causes.
  if (inCauses(error, (e) => e instanceof OutboundRefusedError)) {
    return new IntegrationError(
      502,
      "Provider unavailable",
      `${providerName} could not be reached to ${action}: the outbound URL policy refuses its address`,
    );
  }
  if (inCauses(error, (e) => e instanceof TypeError && e.message === "fetch failed")) {
    return new IntegrationError(502, "Provider unavailable", `${providerName} could not be reached to ${action}`);
  }
  if (error instanceof client.ResponseBodyError) {
    return new IntegrationError(
      400,
      "Provider error",
      `${providerName} refused to ${action}: ${error.error}${error.error_description ? ` (${error.error_description})` : ""}`,
    );
  }
  if (error instanceof client.ClientError && error.code === "OAUTH_RESPONSE_IS_NOT_CONFORM") {
    return new IntegrationError(
      502,
      "Provider unavailable",
      `${providerName} sent an unexpected response while trying to ${action}`,
    );
  }
  if (error instanceof client.ClientError || error instanceof client.AuthorizationResponseError) {
    return new IntegrationError(
      400,
      "Provider response rejected",
      `The response from ${providerName} failed validation while trying to ${action}: ${error.message}`,
    );
  }
  if (error instanceof TypeError || (error instanceof Error && error.name === "TimeoutError")) {
    return new IntegrationError(502, "Provider unavailable", `${providerName} could not be reached to ${action}`);
  }
  throw error;
}

function inCauses(error: unknown, test: (e: unknown) => boolean): boolean {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (test(e)) return true;
  return false;
}

/** Whether a refresh failed because the grant is gone (revoked, expired): the user must connect again. */
export function isGrantRevoked(error: unknown): boolean {
  return error instanceof client.ResponseBodyError && error.error === "invalid_grant";
}
