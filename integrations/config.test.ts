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
});
