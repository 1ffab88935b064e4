import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { MAX_TOKEN_TTL_SECONDS } from "../../../api/admin/bodies.ts";
import { kubecrew, startTokensDev, type TokensDev } from "../tokens/support.ts";

// Issue 28 item 3: a token's lifetime is bounded (10 years). Above it the admin API answered 500 (RangeError:
// Invalid time value) or 201 with an `expires` of year +133055 that broke its own list, and `kubecrew token create`
// printed a stack trace. Now: a 400 in the error body, the bound in the OpenAPI document, one line from the CLI.

const adminKey = "admin-key-for-lifetime-tests-0123456789";
let api: TokensDev;

beforeAll(async () => {
  api = await startTokensDev(inject("redisUrl"), { KUBECREW_ADMIN_KEY: adminKey });
});
afterAll(() => api?.stop());

async function createToken(ttlSeconds: number) {
  const res = await fetch(`${api.url}/admin/tokens`, {
    method: "POST",
    headers: { "x-admin-key": adminKey, "content-type": "application/json" },
    body: JSON.stringify({ kind: "org", crews: "*", ttl_seconds: ttlSeconds }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("POST /admin/tokens with a huge ttl_seconds", () => {
  it.each([8640000000000, 4134863469726, MAX_TOKEN_TTL_SECONDS + 1])(
    "ttl_seconds %d: 400 naming the bound, nothing created",
    async (ttl) => {
      const before = (await api.store.listTokens()).length;
      const res = await createToken(ttl);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: "Bad Request",
        message: `Invalid token request: ttl_seconds: at most ${MAX_TOKEN_TTL_SECONDS} seconds (10 years)`,
        details: [{ field: "ttl_seconds", message: `at most ${MAX_TOKEN_TTL_SECONDS} seconds (10 years)` }],
      });
      expect((await api.store.listTokens()).length).toBe(before);
    },
  );

  it("accepts the bound itself, and the list stays valid ISO dates", async () => {
    const res = await createToken(MAX_TOKEN_TTL_SECONDS);
    expect(res.status).toBe(201);
    const expires = Date.parse(res.body.expires as string);
    expect(expires - Date.now()).toBeGreaterThan((MAX_TOKEN_TTL_SECONDS - 60) * 1000);
    const list = await fetch(`${api.url}/admin/tokens`, { headers: { "x-admin-key": adminKey } });
    const { tokens } = (await list.json()) as { tokens: Array<{ expires?: string }> };
    for (const token of tokens) {
      if (token.expires) expect(token.expires).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it("states the bound in the OpenAPI document", async () => {
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
      components: { schemas: Record<string, { properties: Record<string, { maximum?: number }> }> };
    };
    expect(doc.components.schemas["CreateTokenRequest"]!.properties["ttl_seconds"]).toMatchObject({
      maximum: MAX_TOKEN_TTL_SECONDS,
    });
  });
});

describe("kubecrew token create --ttl above the bound", () => {
  it("prints one line and exits 1, creating nothing", async () => {
    const env = { KUBECREW_REDIS_URL: inject("redisUrl"), KUBECREW_REDIS_KEY_PREFIX: api.prefix };
    const before = (await api.store.listTokens()).length;
    const run = await kubecrew(
      ["token", "create", "--crew", "research", "--kind", "org", "--ttl", "100000000000d"],
      env,
    );
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr: `--ttl: at most ${MAX_TOKEN_TTL_SECONDS} seconds (10 years)\n`,
    });
    expect((await api.store.listTokens()).length).toBe(before);
  });
});
