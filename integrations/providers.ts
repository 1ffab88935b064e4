/**
 * The provider registry: every third-party service a user can connect, as data.
 *
 * `oidc` providers are configured by OpenID Connect discovery from `issuer` (ID tokens are validated);
 * `oauth2` providers have static endpoints. Each product asks for its own scopes; a product-specific client id/secret
 * overrides the provider's pair (see provider-settings.ts for how the environment is read).
 */

export type TokenEndpointAuthMethod = "client_secret_post" | "client_secret_basic";

interface ProviderBase {
  /** URL path segment and lower-case environment prefix source: `google` → `KUBECREW_GOOGLE_CLIENT_ID`. */
  id: string;
  displayName: string;
  /** Scopes every product of this provider asks for, before the product's own. */
  baseScopes: string[];
  products: Record<string, ProductDefinition>;
  /** Extra authorization request parameters, e.g. Google's `access_type=offline`. */
  authorizationParams: Record<string, string>;
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** For providers whose token responses omit `expires_in`: how long to treat an access token as valid. */
  assumedAccessTokenLifetimeSeconds?: number;
  /** Organisation restriction this provider supports, checked against the verified ID token. */
  restriction?: "hostedDomain" | "tenant";
}

export interface OidcProviderDefinition extends ProviderBase {
  kind: "oidc";
  /** Discovery issuer; `{tenant}` is replaced by the configured tenant id (or `defaultTenant`). */
  issuer: string;
  defaultTenant?: string;
}

export interface OAuth2ProviderDefinition extends ProviderBase {
  kind: "oauth2";
  authorizationEndpoint: string;
  tokenEndpoint: string;
  /** RFC 7009 revocation endpoint, when the provider has one. */
  revocationEndpoint?: string;
}

export type ProviderDefinition = OidcProviderDefinition | OAuth2ProviderDefinition;

export interface ProductDefinition {
  displayName: string;
  category: "mail" | "calendar" | "files" | "documents" | "spreadsheets" | "crm" | "notes";
  scopes: string[];
}

const google: OidcProviderDefinition = {
  id: "google",
  displayName: "Google",
  kind: "oidc",
  issuer: "https://accounts.google.com",
  baseScopes: ["openid", "email", "profile"],
  // offline + consent: Google only returns a refresh token on a consented offline request.
  authorizationParams: { access_type: "offline", prompt: "consent", include_granted_scopes: "true" },
  tokenEndpointAuthMethod: "client_secret_post",
  restriction: "hostedDomain",
  products: {
    gmail: { displayName: "Gmail", category: "mail", scopes: ["https://www.googleapis.com/auth/gmail.modify"] },
    calendar: {
      displayName: "Google Calendar",
      category: "calendar",
      scopes: ["https://www.googleapis.com/auth/calendar"],
    },
    drive: { displayName: "Google Drive", category: "files", scopes: ["https://www.googleapis.com/auth/drive"] },
    docs: { displayName: "Google Docs", category: "documents", scopes: ["https://www.googleapis.com/auth/documents"] },
    sheets: {
      displayName: "Google Sheets",
      category: "spreadsheets",
      scopes: ["https://www.googleapis.com/auth/spreadsheets"],
    },
  },
};

const microsoft: OidcProviderDefinition = {
  id: "microsoft",
  displayName: "Microsoft",
  kind: "oidc",
  // Tenant-specific endpoints when KUBECREW_MICROSOFT_TENANT_ID is set; `common` (any work or personal account) otherwise.
  issuer: "https://login.microsoftonline.com/{tenant}/v2.0",
  defaultTenant: "common",
  baseScopes: ["openid", "email", "profile", "offline_access"],
  authorizationParams: {},
  tokenEndpointAuthMethod: "client_secret_post",
  restriction: "tenant",
  products: {
    outlook: { displayName: "Outlook mail", category: "mail", scopes: ["Mail.ReadWrite", "Mail.Send"] },
    calendar: { displayName: "Outlook Calendar", category: "calendar", scopes: ["Calendars.ReadWrite"] },
    onedrive: {
      displayName: "OneDrive and SharePoint",
      category: "files",
      scopes: ["Files.ReadWrite.All", "Sites.ReadWrite.All"],
    },
    word: { displayName: "Word", category: "documents", scopes: ["Files.ReadWrite"] },
    excel: { displayName: "Excel", category: "spreadsheets", scopes: ["Files.ReadWrite"] },
  },
};

const salesforce: OAuth2ProviderDefinition = {
  id: "salesforce",
  displayName: "Salesforce",
  kind: "oauth2",
  // KUBECREW_SALESFORCE_LOGIN_URL (e.g. https://test.salesforce.com or a My Domain URL) replaces this origin.
  authorizationEndpoint: "https://login.salesforce.com/services/oauth2/authorize",
  tokenEndpoint: "https://login.salesforce.com/services/oauth2/token",
  revocationEndpoint: "https://login.salesforce.com/services/oauth2/revoke",
  // Salesforce sends no expires_in; its default session timeout is 2 hours, so refresh well before that.
  assumedAccessTokenLifetimeSeconds: 3600,
  baseScopes: ["refresh_token"],
  authorizationParams: {},
  tokenEndpointAuthMethod: "client_secret_post",
  products: {
    crm: { displayName: "Salesforce CRM", category: "crm", scopes: ["api"] },
  },
};

const hubspot: OAuth2ProviderDefinition = {
  id: "hubspot",
  displayName: "HubSpot",
  kind: "oauth2",
  authorizationEndpoint: "https://app.hubspot.com/oauth/authorize",
  tokenEndpoint: "https://api.hubapi.com/oauth/v1/token",
  baseScopes: ["oauth"],
  authorizationParams: {},
  tokenEndpointAuthMethod: "client_secret_post",
  products: {
    crm: {
      displayName: "HubSpot CRM",
      category: "crm",
      scopes: [
        "crm.objects.contacts.read",
        "crm.objects.contacts.write",
        "crm.objects.companies.read",
        "crm.objects.companies.write",
        "crm.objects.deals.read",
        "crm.objects.deals.write",
      ],
    },
  },
};

const notion: OAuth2ProviderDefinition = {
  id: "notion",
  displayName: "Notion",
  kind: "oauth2",
  authorizationEndpoint: "https://api.notion.com/v1/oauth/authorize",
  tokenEndpoint: "https://api.notion.com/v1/oauth/token",
  baseScopes: [],
  // Notion grants access per page chosen by the user; there are no scopes.
  authorizationParams: { owner: "user" },
  tokenEndpointAuthMethod: "client_secret_basic",
  products: {
    notes: { displayName: "Notion pages and databases", category: "notes", scopes: [] },
  },
};

export const providerRegistry: readonly ProviderDefinition[] = [google, microsoft, salesforce, hubspot, notion];

export function findProviderDefinition(id: string): ProviderDefinition | undefined {
  return providerRegistry.find((provider) => provider.id === id);
}
