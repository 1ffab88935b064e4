import { describe, expect, it } from "vitest";
import { providerRegistry } from "./providers.ts";
import { resolveCredentials, resolveProviderSettings } from "./provider-settings.ts";

describe("provider registry", () => {
  it("covers mail, calendar, files, documents, spreadsheets, CRM and notes", () => {
    const categories = new Set(
      providerRegistry.flatMap((p) => Object.values(p.products).map((product) => product.category)),
    );
    expect([...categories].sort()).toEqual(["calendar", "crm", "documents", "files", "mail", "notes", "spreadsheets"]);
    const ids = (id: string) => Object.keys(providerRegistry.find((p) => p.id === id)!.products);
    expect(ids("google")).toEqual(["gmail", "calendar", "drive", "docs", "sheets"]);
    expect(ids("microsoft")).toEqual(["outlook", "calendar", "onedrive", "word", "excel"]);
    expect(providerRegistry.map((p) => p.id)).toEqual(["google", "microsoft", "salesforce", "hubspot", "notion"]);
  });
});

describe("credential resolution", () => {
  it("uses the provider pair, overridden by a product pair", () => {
    const env = {
      KUBECREW_GOOGLE_CLIENT_ID: "g-id",
      KUBECREW_GOOGLE_CLIENT_SECRET: "g-secret",
      KUBECREW_GOOGLE_GMAIL_CLIENT_ID: "gmail-id",
      KUBECREW_GOOGLE_GMAIL_CLIENT_SECRET: "gmail-secret",
    };
    expect(resolveCredentials(env, "google", "gmail")).toEqual({ clientId: "gmail-id", clientSecret: "gmail-secret" });
    expect(resolveCredentials(env, "google", "drive")).toEqual({ clientId: "g-id", clientSecret: "g-secret" });
    expect(resolveCredentials({}, "google", "drive")).toBeUndefined();
  });

  it("names the missing half of a pair", () => {
    expect(() => resolveCredentials({ KUBECREW_HUBSPOT_CLIENT_ID: "x" }, "hubspot", "crm")).toThrow(
      "Invalid configuration: KUBECREW_HUBSPOT_CLIENT_SECRET: is missing while KUBECREW_HUBSPOT_CLIENT_ID is set",
    );
    expect(() => resolveCredentials({ KUBECREW_GOOGLE_SHEETS_CLIENT_SECRET: "x" }, "google", "sheets")).toThrow(
      /KUBECREW_GOOGLE_SHEETS_CLIENT_ID: is missing/,
    );
  });

  it("lists only products that have credentials, with the provider's and the product's scopes", () => {
    const providers = resolveProviderSettings({
      KUBECREW_GOOGLE_DOCS_CLIENT_ID: "d",
      KUBECREW_GOOGLE_DOCS_CLIENT_SECRET: "s",
    });
    const google = providers.get("google")!;
    expect([...google.products.keys()]).toEqual(["docs"]);
    expect(google.products.get("docs")!.scopes).toEqual([
      "openid",
      "email",
      "profile",
      "https://www.googleapis.com/auth/documents",
    ]);
    expect(providers.get("notion")!.products.size).toBe(0);
  });
});

describe("provider endpoints and restrictions", () => {
  it("sends Google's offline parameters and the hosted domain", () => {
    const google = resolveProviderSettings({ KUBECREW_GOOGLE_HOSTED_DOMAIN: "Example.com" }).get("google")!;
    expect(google.endpoints).toEqual({ kind: "discovery", issuer: new URL("https://accounts.google.com") });
    expect(google.authorizationParams).toMatchObject({ access_type: "offline", prompt: "consent", hd: "example.com" });
    expect(google.hostedDomain).toBe("example.com");
  });

  it("uses Microsoft's tenant-specific issuer when a tenant is set, common otherwise", () => {
    const tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47";
    const restricted = resolveProviderSettings({ KUBECREW_MICROSOFT_TENANT_ID: tenant }).get("microsoft")!;
    expect(restricted.endpoints).toEqual({
      kind: "discovery",
      issuer: new URL(`https://login.microsoftonline.com/${tenant}/v2.0`),
    });
    expect(restricted.tenantId).toBe(tenant);
    const open = resolveProviderSettings({}).get("microsoft")!;
    expect(open.endpoints).toEqual({
      kind: "discovery",
      issuer: new URL("https://login.microsoftonline.com/common/v2.0"),
    });
    expect(() => resolveProviderSettings({ KUBECREW_MICROSOFT_TENANT_ID: "contoso.com" })).toThrow(
      /KUBECREW_MICROSOFT_TENANT_ID: must be the directory \(tenant\) id/,
    );
  });

  it("moves Salesforce to a sandbox login URL and keeps its RFC 7009 revocation endpoint", () => {
    const salesforce = resolveProviderSettings({ KUBECREW_SALESFORCE_LOGIN_URL: "https://test.salesforce.com" }).get(
      "salesforce",
    )!;
    expect(salesforce.endpoints).toEqual({
      kind: "static",
      authorizationEndpoint: new URL("https://test.salesforce.com/services/oauth2/authorize"),
      tokenEndpoint: new URL("https://test.salesforce.com/services/oauth2/token"),
      revocationEndpoint: new URL("https://test.salesforce.com/services/oauth2/revoke"),
    });
    expect(resolveProviderSettings({}).get("hubspot")!.endpoints).not.toHaveProperty("revocationEndpoint");
  });

  it("accepts endpoint overrides over https, or http on loopback only", () => {
    const google = resolveProviderSettings({ KUBECREW_GOOGLE_ISSUER_URL: "http://127.0.0.1:4000" }).get("google")!;
    expect(google.endpoints).toEqual({ kind: "discovery", issuer: new URL("http://127.0.0.1:4000") });
    expect(() => resolveProviderSettings({ KUBECREW_GOOGLE_ISSUER_URL: "http://idp.example.com" })).toThrow(
      /KUBECREW_GOOGLE_ISSUER_URL: must be an https URL/,
    );
    expect(() => resolveProviderSettings({ KUBECREW_HUBSPOT_TOKEN_URL: "not a url" })).toThrow(
      /KUBECREW_HUBSPOT_TOKEN_URL: must be an absolute URL/,
    );
  });
});
