import { describe, expect, it } from "vitest";
import { controllerConfigFromEnv } from "./config.ts";

describe("controller config", () => {
  it("takes the installation's webhook signing key as the default for crews without their own Secret", () => {
    const config = controllerConfigFromEnv({ KUBECREW_WEBHOOK_SIGNING_KEY: "k".repeat(48) });
    expect(config.webhooks.defaultSigningKey).toBe("k".repeat(48));
    expect(controllerConfigFromEnv({}).webhooks.defaultSigningKey).toBeUndefined();
  });

  it("stops on a signing key too short to be one, naming the variable", () => {
    expect(() => controllerConfigFromEnv({ KUBECREW_WEBHOOK_SIGNING_KEY: "short" })).toThrow(
      /KUBECREW_WEBHOOK_SIGNING_KEY/,
    );
  });
});
