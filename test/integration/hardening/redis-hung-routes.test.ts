import { afterAll, beforeAll, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../support/redis.ts";
import { waitFor } from "../../support/wait-for.ts";
import {
  internalApiKey,
  returnUrl,
  type ProviderAndService,
  startProviderAndService,
  uniquePrefix,
} from "../integrations/harness.ts";

// Issue 12 (done-when: "a SIGSTOPped Redis gets 503 in ≤ 2 s from every service"): redis-hung.test.ts checks one
// route per service; here every integrations route that touches Redis, the browser ones included (an HTML page for a
// person mid-sign-in), answers 503 with Retry-After within 2 s while Redis is SIGSTOPped, and works again after
// SIGCONT without a restart.

let redisServer: RedisServer;
let integrations: ProviderAndService;
let connectId: string;
let signIn: { cookie: string; state: string };

const key = { authorization: `Bearer ${internalApiKey}` };
const url = (path: string) => `${integrations.service.url}${path}`;
const createSession = () =>
  fetch(url("/v1/internal/connect-sessions"), {
    method: "POST",
    headers: { ...key, "content-type": "application/json" },
    body: JSON.stringify({ userId: "u1", provider: "google", product: "gmail", returnUrl }),
  });

beforeAll(async () => {
  redisServer = await startRedis();
  integrations = await startProviderAndService({ redisUrl: redisServer.url, prefix: uniquePrefix("hung-routes") });
  const created = await createSession();
  expect(created.status).toBe(201);
  connectId = ((await created.json()) as { id: string }).id;
  const link = await fetch(url(`/v1/connect/${((await (await createSession()).json()) as { id: string }).id}`), {
    redirect: "manual",
  });
  expect(link.status).toBe(303);
  signIn = {
    cookie: link.headers.getSetCookie()[0]!.split(";")[0]!,
    state: new URL(link.headers.get("location")!).searchParams.get("state")!,
  };
});
afterAll(async () => {
  redisServer?.resume();
  await integrations?.stop();
  await redisServer?.stop();
});

const routes: [string, () => Promise<Response>, "json" | "html"][] = [
  ["POST /v1/internal/connect-sessions", createSession, "json"],
  [
    "GET /v1/internal/users/u1/connections",
    () => fetch(url("/v1/internal/users/u1/connections"), { headers: key }),
    "json",
  ],
  ["GET /v1/internal/connections/:id", () => fetch(url("/v1/internal/connections/c1"), { headers: key }), "json"],
  [
    "POST /v1/internal/connections/:id/access-token",
    () => fetch(url("/v1/internal/connections/c1/access-token"), { method: "POST", headers: key }),
    "json",
  ],
  [
    "DELETE /v1/internal/connections/:id",
    () => fetch(url("/v1/internal/connections/c1"), { method: "DELETE", headers: key }),
    "json",
  ],
  ["GET /v1/connect/:sessionId", () => fetch(url(`/v1/connect/${connectId}`), { redirect: "manual" }), "html"],
  [
    "GET /v1/auth/google/callback",
    // The provider's redirect back, with the sign-in cookie and state a real connect link gave (the state is
    // consumed in Redis).
    () =>
      fetch(url(`/v1/auth/google/callback?${new URLSearchParams({ code: "c", state: signIn.state })}`), {
        redirect: "manual",
        headers: { cookie: signIn.cookie },
      }),
    "html",
  ],
];

it("SIGSTOPped Redis: every integrations route that needs it answers 503 with Retry-After within 2 s", async () => {
  redisServer.pause();
  try {
    for (const [name, request, kind] of routes) {
      const started = performance.now();
      const res = await request();
      const ms = performance.now() - started;
      expect(res.status, name).toBe(503);
      expect(res.headers.get("retry-after"), name).toBe("5");
      expect(res.headers.get("content-type"), name).toContain(kind === "json" ? "application/json" : "text/html");
      expect(ms, name).toBeLessThan(2000);
    }
  } finally {
    redisServer.resume();
  }
  // SIGCONT: the same process serves again.
  await waitFor(async () => ((await createSession()).status === 201 ? true : undefined), 15_000, 100);
  const link = await fetch(url(`/v1/connect/${((await (await createSession()).json()) as { id: string }).id}`), {
    redirect: "manual",
  });
  expect(link.status).toBe(303);
});
