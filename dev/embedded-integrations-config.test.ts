import { describe, expect, it } from "vitest";
import { ConfigError } from "../core/config.ts";
import { localPolicy } from "../core/outbound/policy.ts";
import { devConfigSchema } from "./config.ts";
import { embeddedIntegrationsFrom, withDevUrl, withoutIntegrationsSecrets } from "./embedded-integrations-config.ts";

const dev = { port: 0, outbound: localPolicy };

describe("the integrations service kubecrew dev runs", () => {
  it("runs by default, its secrets generated for this process, different each time", () => {
    const a = devConfigSchema.parse({}).embeddedIntegrations!;
    const b = devConfigSchema.parse({}).embeddedIntegrations!;
    expect(a.config.encryptionKey).toHaveLength(32);
    expect(a.internalApiKey).toMatch(/^[0-9a-f]{64}$/);
    expect(a.appsSigningKey).toMatch(/^[0-9a-f]{64}$/);
    expect(a.config.apps.signingKey).toBe(a.appsSigningKey);
    expect(a.encryptionKeyGiven).toBe(false);
    for (const secret of ["internalApiKey", "appsSigningKey"] as const) expect(a[secret]).not.toBe(b[secret]);
    expect(a.config.cookieSecret).not.toBe(b.config.cookieSecret);
    expect(a.config.encryptionKey.equals(b.config.encryptionKey)).toBe(false);
  });

  it("takes the secrets, providers and public URL given, as `kubecrew integrations` reads them", () => {
    const settings = embeddedIntegrationsFrom(
      {
        KUBECREW_OAUTH_DB_ENCRYPTION_KEY: "ab".repeat(32),
        KUBECREW_OAUTH_INTERNAL_API_KEY: "internal-key-0123456789abcdef0123456789",
        KUBECREW_APPS_SIGNING_KEY: "signing-key-0123456789abcdef0123456789",
        KUBECREW_OAUTH_PUBLIC_URL: "https://dev.example.com/oauthsvc",
        KUBECREW_GOOGLE_CLIENT_ID: "id",
        KUBECREW_GOOGLE_CLIENT_SECRET: "secret",
      },
      dev,
    );
    expect(settings).toMatchObject({
      internalApiKey: "internal-key-0123456789abcdef0123456789",
      appsSigningKey: "signing-key-0123456789abcdef0123456789",
      encryptionKeyGiven: true,
      publicUrlGiven: true,
    });
    expect(settings.config.encryptionKey.toString("hex")).toBe("ab".repeat(32));
    expect([...settings.config.providers.get("google")!.products.keys()]).toContain("gmail");
    expect(withDevUrl(settings, "http://127.0.0.1:9999").publicUrl.href).toBe("https://dev.example.com/oauthsvc");
  });

  it("is at the dev server's /oauthsvc once it listens, and returns browsers to the console on this machine", () => {
    const config = withDevUrl(embeddedIntegrationsFrom({}, dev), "http://127.0.0.1:41234");
    expect(config.publicUrl.href).toBe("http://127.0.0.1:41234/oauthsvc");
    expect(config.allowedReturnHosts).toEqual(expect.arrayContaining(["127.0.0.1:41234", "localhost", "[::1]"]));
    expect(config.outbound).toBe(localPolicy);
  });

  it("refuses a bad secret given with the integrations service's one line", () => {
    expect(() => embeddedIntegrationsFrom({ KUBECREW_OAUTH_DB_ENCRYPTION_KEY: "not-hex" }, dev)).toThrow(ConfigError);
    expect(() => embeddedIntegrationsFrom({ KUBECREW_OAUTH_DB_ENCRYPTION_KEY: "not-hex" }, dev)).toThrow(
      "Invalid configuration: KUBECREW_OAUTH_DB_ENCRYPTION_KEY: must be exactly 64 hexadecimal characters",
    );
  });

  it("is not run when KUBECREW_APPS_URL or KUBECREW_INTEGRATIONS_URL names a service elsewhere", () => {
    const key = { KUBECREW_APPS_SIGNING_KEY: "signing-key-0123456789abcdef0123456789" };
    expect(
      devConfigSchema.parse({ ...key, KUBECREW_APPS_URL: "http://127.0.0.1:8787/v1/mcp" }).embeddedIntegrations,
    ).toBeUndefined();
    expect(
      devConfigSchema.parse({ KUBECREW_INTEGRATIONS_URL: "http://127.0.0.1:8787" }).embeddedIntegrations,
    ).toBeUndefined();
  });

  it("leaves its secrets out of the task processes' environment", () => {
    const env = withoutIntegrationsSecrets({
      PATH: "/bin",
      OPENAI_API_KEY: "sk-1",
      AZURE_CLIENT_SECRET: "an LLM provider's",
      KUBECREW_OAUTH_INTERNAL_API_KEY: "x",
      KUBECREW_OAUTH_DB_ENCRYPTION_KEY: "x",
      KUBECREW_OAUTH_COOKIE_SECRET: "x",
      KUBECREW_APPS_SIGNING_KEY: "x",
      KUBECREW_GOOGLE_CLIENT_SECRET: "x",
      KUBECREW_GOOGLE_GMAIL_CLIENT_SECRET: "x",
      KUBECREW_NOTION_CLIENT_SECRET: "x",
    });
    expect(env).toEqual({ PATH: "/bin", OPENAI_API_KEY: "sk-1", AZURE_CLIENT_SECRET: "an LLM provider's" });
  });
});
