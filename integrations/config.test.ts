import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";

const valid = {
  KUBECREW_OAUTH_PUBLIC_URL: "https://app.example.com/oauthsvc/",
  KUBECREW_OAUTH_COOKIE_SECRET: "c".repeat(32),
  KUBECREW_OAUTH_DB_ENCRYPTION_KEY: "aB".repeat(32),
  KUBECREW_OAUTH_INTERNAL_API_KEY: "k".repeat(32),
};

describe("integrations config", () => {
  it("defaults to port 8787 and allows the public host as a return host", () => {
    const config = loadConfig(valid);
    expect(config.port).toBe(8787);
    expect(config.publicUrl.href).toBe("https://app.example.com/oauthsvc");
    expect(config.allowedReturnHosts).toEqual(["app.example.com"]);
    expect(config.encryptionKey).toHaveLength(32);
  });

  it("reads KUBECREW_INTEGRATIONS_PORT before PORT, and the return host allow list", () => {
    const config = loadConfig({
      ...valid,
      PORT: "9000",
      KUBECREW_INTEGRATIONS_PORT: "9100",
      KUBECREW_OAUTH_ALLOWED_RETURN_HOSTS: "Web.example.com, localhost:3000",
    });
    expect(config.port).toBe(9100);
    expect(config.allowedReturnHosts).toEqual(["app.example.com", "web.example.com", "localhost:3000"]);
  });

  it.each([
    ["a short key", "ab".repeat(31)],
    ["a long key", "ab".repeat(33)],
    ["a non-hex key", "zz".repeat(32)],
  ])("rejects %s with one line naming KUBECREW_OAUTH_DB_ENCRYPTION_KEY", (_, key) => {
    expect(() => loadConfig({ ...valid, KUBECREW_OAUTH_DB_ENCRYPTION_KEY: key })).toThrow(
      /^Invalid configuration: KUBECREW_OAUTH_DB_ENCRYPTION_KEY: must be exactly 64 hexadecimal characters/,
    );
  });

  it("names each missing secret", () => {
    for (const name of [
      "KUBECREW_OAUTH_COOKIE_SECRET",
      "KUBECREW_OAUTH_INTERNAL_API_KEY",
      "KUBECREW_OAUTH_DB_ENCRYPTION_KEY",
    ] as const) {
      const env: Record<string, string> = { ...valid };
      delete env[name];
      expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${name}: is required`));
    }
  });

  it("rejects a public URL that is not http(s)", () => {
    expect(() => loadConfig({ ...valid, KUBECREW_OAUTH_PUBLIC_URL: "app.example.com" })).toThrow(
      /^Invalid configuration: KUBECREW_OAUTH_PUBLIC_URL: must be an absolute http\(s\) URL/,
    );
  });

  it("reads the connected apps' settings, a blank value as unset", () => {
    const config = loadConfig({
      ...valid,
      KUBECREW_APPS_SIGNING_KEY: "s".repeat(32),
      KUBECREW_GOOGLE_API_BASE_URL: " http://127.0.0.1:9/google/ ",
      KUBECREW_NOTION_API_BASE_URL: "https://notion.example.com/",
      KUBECREW_HUBSPOT_API_BASE_URL: "  ",
      KUBECREW_APPS_CONNECT_RETURN_URL: "https://app.example.com/console/connected",
    });
    expect(config.apps).toEqual({
      signingKey: "s".repeat(32),
      apiRoots: { google: new URL("http://127.0.0.1:9/google/"), notion: new URL("https://notion.example.com/") },
      connectReturnUrl: "https://app.example.com/console/connected",
    });
    expect(loadConfig({ ...valid, KUBECREW_APPS_SIGNING_KEY: " " }).apps).toEqual({ apiRoots: {} });
  });

  it.each([
    [
      "KUBECREW_MICROSOFT_GRAPH_BASE_URL",
      "http://graph.example.com",
      /must be an https URL \(plain http is accepted for loopback hosts only\)/,
    ],
    ["KUBECREW_SALESFORCE_INSTANCE_URL", "not a url", /must be an absolute URL, got "not a url"/],
    ["KUBECREW_APPS_SIGNING_KEY", "short", /must be at least 32 characters/],
    ["KUBECREW_APPS_CONNECT_RETURN_URL", "/connected", /must be an absolute http\(s\) URL/],
    ["KUBECREW_APPS_CONNECT_RETURN_URL", "https://elsewhere.example.com/", /must be on an allowed return host/],
  ])("refuses %s=%j with one line naming it", (name, value, problem) => {
    expect(() => loadConfig({ ...valid, [name]: value })).toThrow(
      new RegExp(`^Invalid configuration: ${name}: ${problem.source}`),
    );
  });
});
