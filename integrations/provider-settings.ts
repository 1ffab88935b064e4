import { z } from "zod";
import { ConfigError } from "../core/config.ts";
import { providerRegistry, type ProviderDefinition, type TokenEndpointAuthMethod } from "./providers.ts";

/** One product a user can connect, with the client credentials that apply to it. */
export interface ProductSettings {
  provider: string;
  product: string;
  displayName: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
}

export type ProviderEndpoints =
  | { kind: "discovery"; issuer: URL }
  | { kind: "static"; authorizationEndpoint: URL; tokenEndpoint: URL; revocationEndpoint?: URL };

/** A provider from the registry, resolved against the environment. Only products with credentials are listed. */
export interface ProviderSettings {
  id: string;
  displayName: string;
  endpoints: ProviderEndpoints;
  authorizationParams: Record<string, string>;
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  assumedAccessTokenLifetimeSeconds?: number;
  /** KUBECREW_MICROSOFT_TENANT_ID: the verified ID token's `tid` must equal it. */
  tenantId?: string;
  /** KUBECREW_GOOGLE_HOSTED_DOMAIN: sent as `hd`, and the verified ID token's `hd` must equal it. */
  hostedDomain?: string;
  products: Map<string, ProductSettings>;
}

type Env = Record<string, string | undefined>;

const named = (description: string) => z.string().optional().describe(description);

/**
 * Every variable a provider of the registry is configured by, named after it and its products (`KUBECREW_GOOGLE_…`,
 * `KUBECREW_GOOGLE_GMAIL_…`): the names resolveProviderSettings reads, for docs/configuration.md.
 */
function variablesOf(provider: ProviderDefinition): [string, z.ZodType][] {
  const prefix = envName(provider.id);
  const name = provider.displayName;
  const variables: [string, z.ZodType][] = [
    [
      `${prefix}_CLIENT_ID`,
      named(`The OAuth client ID for each ${name} product without its own; a product is offered only with one.`),
    ],
    [`${prefix}_CLIENT_SECRET`, named(`The client secret that goes with ${prefix}_CLIENT_ID.`)],
  ];
  for (const [product, definition] of Object.entries(provider.products)) {
    const own = envName(provider.id, product);
    variables.push(
      [
        `${own}_CLIENT_ID`,
        named(`The OAuth client ID for ${definition.displayName} alone, before ${prefix}_CLIENT_ID.`),
      ],
      [`${own}_CLIENT_SECRET`, named(`The client secret that goes with ${own}_CLIENT_ID.`)],
    );
  }
  if (provider.kind === "oidc") {
    variables.push([
      `${prefix}_ISSUER_URL`,
      named(`${name}'s OpenID Connect issuer, instead of its public one (https, or http on loopback).`),
    ]);
  } else {
    variables.push(
      [
        `${prefix}_LOGIN_URL`,
        named(`Moves each of ${name}'s endpoints to another origin (Salesforce sandboxes, My Domain logins).`),
      ],
      [`${prefix}_AUTHORIZATION_URL`, named(`${name}'s authorization endpoint, instead of its public one.`)],
      [`${prefix}_TOKEN_URL`, named(`${name}'s token endpoint, instead of its public one.`)],
      [`${prefix}_REVOCATION_URL`, named(`${name}'s token revocation endpoint, instead of its public one.`)],
    );
  }
  if (provider.restriction === "tenant") {
    variables.push([
      `${prefix}_TENANT_ID`,
      named("Only accounts of this Entra ID directory (tenant) may connect; the ID token's `tid` must equal it."),
    ]);
  }
  if (provider.restriction === "hostedDomain") {
    variables.push([
      `${prefix}_HOSTED_DOMAIN`,
      named("Only accounts of this Google Workspace domain may connect (sent as `hd`, checked in the ID token)."),
    ]);
  }
  return variables;
}

/** The providers' variables, each by its name (docs/configuration.md lists each). */
export const providerVariables = z.object(Object.fromEntries(providerRegistry.flatMap(variablesOf)));

const tenantIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const hostedDomainPattern = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

/** `KUBECREW_GOOGLE`, `KUBECREW_GOOGLE_GMAIL`: the prefix of a provider's (or one product's) variables. */
function envName(...parts: string[]): string {
  return ["KUBECREW", ...parts].map((part) => part.toUpperCase().replace(/[^A-Z0-9]/g, "_")).join("_");
}

function value(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw ? raw : undefined;
}

const loopbackHosts = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** What is wrong with an endpoint URL, if anything: it must be https, or plain http on loopback only (local fixtures). */
export function endpointProblem(raw: string): string | undefined {
  if (!URL.canParse(raw)) return `must be an absolute URL, got "${raw}"`;
  const url = new URL(raw);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopbackHosts.has(url.hostname))) {
    return "must be an https URL (plain http is accepted for loopback hosts only)";
  }
  return undefined;
}

/** An endpoint URL from the environment (endpointProblem's rules). */
function endpointUrl(env: Env, name: string): URL | undefined {
  const raw = value(env, name);
  if (raw === undefined) return undefined;
  const problem = endpointProblem(raw);
  if (problem) throw new ConfigError(name, problem);
  return new URL(raw);
}

/** The client id/secret for one product: `KUBECREW_<PROVIDER>_<PRODUCT>_CLIENT_ID/_SECRET` overrides `KUBECREW_<PROVIDER>_CLIENT_ID/_SECRET`. */
export function resolveCredentials(
  env: Env,
  provider: string,
  product: string,
): { clientId: string; clientSecret: string } | undefined {
  for (const prefix of [envName(provider, product), envName(provider)]) {
    const clientId = value(env, `${prefix}_CLIENT_ID`);
    const clientSecret = value(env, `${prefix}_CLIENT_SECRET`);
    if (clientId === undefined && clientSecret === undefined) continue;
    if (clientId === undefined)
      throw new ConfigError(`${prefix}_CLIENT_ID`, `is missing while ${prefix}_CLIENT_SECRET is set`);
    if (clientSecret === undefined)
      throw new ConfigError(`${prefix}_CLIENT_SECRET`, `is missing while ${prefix}_CLIENT_ID is set`);
    return { clientId, clientSecret };
  }
  return undefined;
}

function resolveEndpoints(env: Env, definition: ProviderDefinition, tenantId: string | undefined): ProviderEndpoints {
  const prefix = envName(definition.id);
  if (definition.kind === "oidc") {
    const override = endpointUrl(env, `${prefix}_ISSUER_URL`);
    const tenant = tenantId ?? definition.defaultTenant ?? "";
    return { kind: "discovery", issuer: override ?? new URL(definition.issuer.replace("{tenant}", tenant)) };
  }
  // KUBECREW_<PROVIDER>_LOGIN_URL moves every endpoint to another origin (Salesforce sandboxes and My Domain logins).
  const login = endpointUrl(env, `${prefix}_LOGIN_URL`);
  const at = (defaultUrl: string) => {
    const url = new URL(defaultUrl);
    return login ? new URL(url.pathname, login) : url;
  };
  const revocation = endpointUrl(env, `${prefix}_REVOCATION_URL`);
  return {
    kind: "static",
    authorizationEndpoint: endpointUrl(env, `${prefix}_AUTHORIZATION_URL`) ?? at(definition.authorizationEndpoint),
    tokenEndpoint: endpointUrl(env, `${prefix}_TOKEN_URL`) ?? at(definition.tokenEndpoint),
    ...(revocation || definition.revocationEndpoint
      ? { revocationEndpoint: revocation ?? at(definition.revocationEndpoint!) }
      : {}),
  };
}

function resolveProvider(env: Env, definition: ProviderDefinition): ProviderSettings {
  const prefix = envName(definition.id);
  let tenantId: string | undefined;
  let hostedDomain: string | undefined;
  if (definition.restriction === "tenant") {
    tenantId = value(env, `${prefix}_TENANT_ID`);
    if (tenantId !== undefined && !tenantIdPattern.test(tenantId)) {
      throw new ConfigError(
        `${prefix}_TENANT_ID`,
        "must be the directory (tenant) id, a GUID such as 72f988bf-86f1-41af-91ab-2d7cd011db47",
      );
    }
    tenantId = tenantId?.toLowerCase();
  }
  if (definition.restriction === "hostedDomain") {
    hostedDomain = value(env, `${prefix}_HOSTED_DOMAIN`);
    if (hostedDomain !== undefined && !hostedDomainPattern.test(hostedDomain)) {
      throw new ConfigError(`${prefix}_HOSTED_DOMAIN`, "must be a domain name such as example.com");
    }
    hostedDomain = hostedDomain?.toLowerCase();
  }

  const products = new Map<string, ProductSettings>();
  for (const [product, productDefinition] of Object.entries(definition.products)) {
    const credentials = resolveCredentials(env, definition.id, product);
    if (!credentials) continue;
    products.set(product, {
      provider: definition.id,
      product,
      displayName: productDefinition.displayName,
      ...credentials,
      scopes: [...new Set([...definition.baseScopes, ...productDefinition.scopes])],
    });
  }

  return {
    id: definition.id,
    displayName: definition.displayName,
    endpoints: resolveEndpoints(env, definition, tenantId),
    authorizationParams: { ...definition.authorizationParams, ...(hostedDomain ? { hd: hostedDomain } : {}) },
    tokenEndpointAuthMethod: definition.tokenEndpointAuthMethod,
    ...(definition.assumedAccessTokenLifetimeSeconds
      ? { assumedAccessTokenLifetimeSeconds: definition.assumedAccessTokenLifetimeSeconds }
      : {}),
    ...(tenantId ? { tenantId } : {}),
    ...(hostedDomain ? { hostedDomain } : {}),
    products,
  };
}

/** Every registry provider resolved against the environment (providers without credentials have no products). */
export function resolveProviderSettings(env: Env): Map<string, ProviderSettings> {
  return new Map(providerRegistry.map((definition) => [definition.id, resolveProvider(env, definition)]));
}
