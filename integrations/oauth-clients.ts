import * as client from "openid-client";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import type { ProductSettings, ProviderSettings } from "./provider-settings.ts";

/** openid-client Configurations, one per provider product (the client id may differ per product), built once. */
export interface OAuthClients {
  configuration(provider: ProviderSettings, product: ProductSettings): Promise<client.Configuration>;
}

function clientAuthentication(provider: ProviderSettings, product: ProductSettings): client.ClientAuth {
  return provider.tokenEndpointAuthMethod === "client_secret_basic"
    ? client.ClientSecretBasic(product.clientSecret)
    : client.ClientSecretPost(product.clientSecret);
}

/** Well inside the refresh lock's 30 s, so a slow provider never lets a second refresh start. */
const providerTimeoutSeconds = 10;

async function build(
  provider: ProviderSettings,
  product: ProductSettings,
  fetch: Fetch,
): Promise<client.Configuration> {
  const auth = clientAuthentication(provider, product);
  const metadata = { client_secret: product.clientSecret };
  const { endpoints } = provider;
  if (endpoints.kind === "discovery") {
    // Plain http is only ever configured for loopback test providers (provider-settings.ts refuses it elsewhere).
    const execute = endpoints.issuer.protocol === "http:" ? [client.allowInsecureRequests] : [];
    const configuration = await client.discovery(endpoints.issuer, product.clientId, metadata, auth, {
      execute,
      timeout: 15,
      [client.customFetch]: fetch,
    });
    // Check the ID token's signature against the provider's published keys as well as its claims.
    client.enableNonRepudiationChecks(configuration);
    configuration.timeout = providerTimeoutSeconds;
    return configuration;
  }
  const server: client.ServerMetadata = {
    issuer: endpoints.authorizationEndpoint.origin,
    authorization_endpoint: endpoints.authorizationEndpoint.href,
    token_endpoint: endpoints.tokenEndpoint.href,
    ...(endpoints.revocationEndpoint ? { revocation_endpoint: endpoints.revocationEndpoint.href } : {}),
  };
  const configuration = new client.Configuration(server, product.clientId, metadata, auth);
  configuration[client.customFetch] = fetch;
  const urls = [endpoints.authorizationEndpoint, endpoints.tokenEndpoint, endpoints.revocationEndpoint];
  if (urls.some((url) => url?.protocol === "http:")) client.allowInsecureRequests(configuration);
  configuration.timeout = providerTimeoutSeconds;
  return configuration;
}

/** `fetch` is the outbound client's: discovery, token, userinfo and revocation calls follow the outbound URL policy. */
export function createOAuthClients(fetch: Fetch): OAuthClients {
  const cache = new Map<string, Promise<client.Configuration>>();
  return {
    configuration(provider, product) {
      const key = `${provider.id}/${product.product}`;
      let pending = cache.get(key);
      if (!pending) {
        pending = build(provider, product, fetch);
        // A failed discovery is retried on the next sign-in instead of being remembered.
        pending.catch(() => cache.delete(key));
        cache.set(key, pending);
      }
      return pending;
    },
  };
}
