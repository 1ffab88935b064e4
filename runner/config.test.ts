import { describe, expect, it } from "vitest";
import { ConfigError } from "../core/config.ts";
import { APPS_CREDENTIAL_PATH } from "../kube/apps-secret.ts";
import { runnerConfigFromEnv } from "./config.ts";
import { DEFAULT_RETRY_POLICY } from "./retry.ts";

describe("runnerConfigFromEnv", () => {
  it("has defaults for everything", () => {
    const config = runnerConfigFromEnv({});
    expect(config).toMatchObject({ logLevel: "info", attempt: 1, retry: DEFAULT_RETRY_POLICY });
  });

  it("reads the retry settings and keeps the environment for API keys", () => {
    const config = runnerConfigFromEnv({
      KUBECREW_LLM_MAX_RETRIES: "2",
      KUBECREW_LLM_RETRY_INITIAL_DELAY_MS: "10",
      KUBECREW_LLM_RETRY_MAX_DELAY_MS: "40",
      KUBECREW_LLM_MAX_RETRY_AFTER_SECONDS: "5",
      KUBECREW_LLM_TIMEOUT_SECONDS: "30",
      KUBECREW_TASK_ATTEMPT: "2",
      OPENAI_API_KEY: "k",
    });
    expect(config.retry).toEqual({
      maxRetries: 2,
      initialDelayMs: 10,
      maxDelayMs: 40,
      maxRetryAfterMs: 5_000,
      attemptTimeoutMs: 30_000,
    });
    expect(config.attempt).toBe(2);
    expect(config.env.OPENAI_API_KEY).toBe("k");
  });

  it("names the variable with a bad value", () => {
    expect(() => runnerConfigFromEnv({ KUBECREW_LLM_MAX_RETRIES: "many" })).toThrow(ConfigError);
    expect(() => runnerConfigFromEnv({ KUBECREW_LLM_MAX_RETRIES: "many" })).toThrow(
      /^Invalid configuration: KUBECREW_LLM_MAX_RETRIES: /,
    );
    expect(() => runnerConfigFromEnv({ KUBECREW_LLM_TIMEOUT_SECONDS: "0" })).toThrow(/KUBECREW_LLM_TIMEOUT_SECONDS/);
    expect(() => runnerConfigFromEnv({ LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL/);
  });

  it("reads the app credential where the controller mounts it, never under a directory the environment names", () => {
    const config = runnerConfigFromEnv({
      KUBECREW_CONTAINER_ROOT: "/tmp/node/pod-1", // what the local test node once set: read no more
      KUBECREW_APPS_URL: "http://127.0.0.1:8787/v1/mcp",
      KUBECREW_APPS_CREDENTIAL_FILE: "/var/run/kubecrew/apps/credential",
      POD_NAME: "run-1-0-abcde",
    });
    expect(config.kubernetes).toEqual({ podName: "run-1-0-abcde" });
    expect(config.apps?.credentialFile).toBe("/var/run/kubecrew/apps/credential");
    expect(runnerConfigFromEnv({ KUBECREW_APPS_URL: "http://127.0.0.1:8787/v1/mcp" }).apps?.credentialFile).toBe(
      APPS_CREDENTIAL_PATH,
    );
  });
});
