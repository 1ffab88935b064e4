import type { ProviderSettings } from "./provider-settings.ts";

/**
 * Checks the verified ID token against the provider's organisation restriction (Google `hd`, Microsoft `tid`).
 * Returns a message for the user when the account is outside the organisation, undefined when it may connect.
 */
export function organisationViolation(
  provider: ProviderSettings,
  claims: Record<string, unknown> | undefined,
): string | undefined {
  if (provider.hostedDomain) {
    const hd = typeof claims?.["hd"] === "string" ? claims["hd"].toLowerCase() : undefined;
    if (hd !== provider.hostedDomain) {
      return hd
        ? `This ${provider.displayName} account belongs to ${hd}; only accounts of ${provider.hostedDomain} may be connected.`
        : `This ${provider.displayName} account is not an account of ${provider.hostedDomain}; only accounts of ${provider.hostedDomain} may be connected.`;
    }
  }
  if (provider.tenantId) {
    const tid = typeof claims?.["tid"] === "string" ? claims["tid"].toLowerCase() : undefined;
    if (tid !== provider.tenantId) {
      return `This ${provider.displayName} account is not in the allowed directory (tenant); only accounts of tenant ${provider.tenantId} may be connected.`;
    }
  }
  return undefined;
}
