import { Writable } from "node:stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { MemoryTokenStore } from "../../../api/auth/memory-token-store.ts";
import type { ExecutionBackend } from "../../../api/execution-backend.ts";
import { startApi, type RunningServer } from "../../../api/server.ts";
import { createLogger } from "../../../core/logger.ts";
import { clusterPolicy } from "../../../core/outbound/policy.ts";

const lines: string[] = [];
let api: RunningServer;
beforeAll(async () => {
  const failing: ExecutionBackend = {
    getCrew: async () => {
      throw new Error("connect ECONNREFUSED 10.0.0.7:6443 at /srv/secret/path.ts:12");
    },
    listCrews: async () => [],
    createExecution: async () => ({ kind: "started", id: "00000000-0000-4000-8000-000000000000" }),
    getExecution: async () => undefined,
    listExecutions: async () => [],
    stopExecution: async () => undefined,
  };
  const tokens = new MemoryTokenStore();
  tokens.add("kco_internal-error-test-token", { kind: "org", crews: "*", subject: "org" });
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  api = await startApi({
    backend: failing,
    tokens,
    log: createLogger({ level: "info" }, sink),
    bodyLimitBytes: 1024,
    outboundPolicy: clusterPolicy,
    defaultCrew: "research",
    port: 0,
    host: "127.0.0.1",
  });
});
afterAll(() => api?.stop());

it("answers an unexpected failure with a bare 500 and logs it once, with the token redacted", async () => {
  const res = await fetch(`${api.url}/inputs`, { headers: { authorization: "Bearer kco_internal-error-test-token" } });
  expect(res.status).toBe(500);
  expect(await res.json()).toEqual({ error: "Internal Server Error", message: "An unexpected error occurred" });
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain("ECONNREFUSED");
  expect(lines.join("")).not.toContain("kco_internal-error-test-token");
});

it("answers unknown routes with a 404 in the documented body", async () => {
  const res = await fetch(`${api.url}/no/such/route`);
  expect(res.status).toBe(404);
  expect(await res.json()).toEqual({ error: "Not Found", message: "No route for GET /no/such/route" });
});

it("tells a browser that lands on a provider callback that the integrations Ingress route is missing", async () => {
  const html = await fetch(`${api.url}/v1/auth/google/callback?code=x&state=y`, { headers: { accept: "text/html" } });
  expect(html.status).toBe(502);
  expect(await html.text()).toContain("the Ingress route for the integrations service is not configured");
  const json = await fetch(`${api.url}/oauthsvc/v1/auth/google/start`, { headers: { accept: "application/json" } });
  expect(json.status).toBe(502);
  expect(((await json.json()) as { error: string }).error).toBe("Integrations route not configured");
});
