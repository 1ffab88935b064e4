import express from "express";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../core/config.ts";
import { DependencyUnavailable, KubecrewError } from "../../core/errors.ts";
import { createLogger } from "../../core/logger.ts";
import { errorMapper } from "./error-mapper.ts";
import { HttpError } from "./http-error.ts";

class StoreDown extends DependencyUnavailable {
  constructor() {
    super("token store", "ECONNREFUSED 127.0.0.1:6379", {
      answer: "The token store is unreachable; try again shortly",
    });
  }
}

/** An error of kubecrew's own that carries a status (as IntegrationsRefused, ProviderApiError) and so a string code. */
class RefusedUpstream extends KubecrewError {
  readonly code = "refused_upstream";
  readonly status = 400;
}

describe("errorMapper", () => {
  let url: string;
  let close: () => void;
  const logged: string[] = [];

  beforeAll(async () => {
    const app = express();
    app.get("/http", () => {
      throw new HttpError(404, "Crew not found", 'No crew named "x"', { details: { crew: "x" } });
    });
    app.get("/store-down", async () => {
      throw new StoreDown();
    });
    app.get("/dependency", () => {
      throw new DependencyUnavailable("integrations service", "answered HTTP 502", { retryAfterSeconds: 7 });
    });
    app.get("/own-error", () => {
      throw new RefusedUpstream("upstream said no");
    });
    app.get("/bug", () => {
      throw new Error("secret internals");
    });
    const log = createLogger({ level: "error", name: "test" }, { write: (line: string) => logged.push(line) });
    app.use(
      errorMapper({ log, tooLarge: () => "too large", notJson: "not JSON", internal: "An unexpected error occurred" }),
    );
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  it("answers an HttpError with its status and documented body", async () => {
    const res = await fetch(`${url}/http`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "Crew not found", message: 'No crew named "x"', details: { crew: "x" } });
  });

  it("answers any DependencyUnavailable 503 with its answer and Retry-After, never its internal message, unlogged", async () => {
    const res = await fetch(`${url}/store-down`);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(await res.json()).toEqual({
      error: "Service Unavailable",
      message: "The token store is unreachable; try again shortly",
    });
    const other = await fetch(`${url}/dependency`);
    expect(other.status).toBe(503);
    expect(other.headers.get("retry-after")).toBe("7");
    expect(await other.json()).toEqual({
      error: "Service Unavailable",
      message: "The integrations service is unavailable; try again shortly",
    });
    expect(logged.join("")).not.toContain("ECONNREFUSED");
  });

  it("answers anything else 500 without its message, and logs it once", async () => {
    const res = await fetch(`${url}/bug`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "Internal Server Error", message: "An unexpected error occurred" });
    expect(logged.filter((line) => line.includes("secret internals"))).toHaveLength(1);
  });

  it("does not take an error of kubecrew's own with status 400 for a body that failed to decompress", async () => {
    // zlib's errors reach the mapper as status 400 with a string code; kubecrew's own errors have a code too.
    const res = await fetch(`${url}/own-error`, { headers: { "Content-Encoding": "gzip" } });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "Internal Server Error", message: "An unexpected error occurred" });
  });
});

describe("KubecrewError", () => {
  it("gives each kind a stable code, whatever its message", () => {
    const errors: KubecrewError[] = [
      new ConfigError("PORT", "must be a number"),
      new HttpError(404, "Not Found", "No route"),
      new DependencyUnavailable("token store", "down"),
    ];
    expect(errors.map((e) => e.code)).toEqual(["invalid_configuration", "http_404", "dependency_unavailable"]);
    expect(errors.every((e) => e instanceof KubecrewError && e instanceof Error)).toBe(true);
  });
});
