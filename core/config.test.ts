import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, logLevel, parseConfig } from "./config.ts";

const schema = z
  .object({
    PORT: z.coerce.number().int().max(65535).default(8080),
    KUBECREW_REDIS_URL: z.string().regex(/^redis:\/\//, "must be a redis:// URL"),
    LOG_LEVEL: logLevel,
  })
  .transform((e) => ({ port: e.PORT, redisUrl: e.KUBECREW_REDIS_URL, logLevel: e.LOG_LEVEL }));

describe("parseConfig", () => {
  it("maps the environment to the camelCase config, with defaults", () => {
    expect(parseConfig(schema, { KUBECREW_REDIS_URL: "redis://r" })).toEqual({
      port: 8080,
      redisUrl: "redis://r",
      logLevel: "info",
    });
  });

  it("names the variable of a bad value in one line", () => {
    const bad = () => parseConfig(schema, { KUBECREW_REDIS_URL: "redis://r", PORT: "99999" });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(/^Invalid configuration: PORT: Too big/);
    expect(() => parseConfig(schema, { KUBECREW_REDIS_URL: "http://r" })).toThrow(
      "Invalid configuration: KUBECREW_REDIS_URL: must be a redis:// URL",
    );
  });

  it("says a missing variable is required instead of zod's 'expected string, received undefined'", () => {
    expect(() => parseConfig(schema, {})).toThrow("Invalid configuration: KUBECREW_REDIS_URL: is required");
  });

  it("knows one set of log levels", () => {
    expect(() => parseConfig(schema, { KUBECREW_REDIS_URL: "redis://r", LOG_LEVEL: "loud" })).toThrow(
      /^Invalid configuration: LOG_LEVEL: /,
    );
    expect(parseConfig(schema, { KUBECREW_REDIS_URL: "redis://r", LOG_LEVEL: "silent" }).logLevel).toBe("silent");
  });
});
