import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { basic, bearer, clientCredentialsToken, startTokensDev, tokenRequest, type TokensDev } from "./support.ts";

const adminKey = "admin-key-for-tests-0123456789abcdef";
let api: TokensDev;

beforeAll(async () => {
  api = await startTokensDev(inject("redisUrl"), { KUBECREW_ADMIN_KEY: adminKey });
});
afterAll(() => api?.stop());

/** key null: send no X-Admin-Key header. */
async function admin(method: string, path: string, body?: unknown, key: string | null = adminKey) {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      ...(key !== null ? { "x-admin-key": key } : {}),
      ...(body ? { "content-type": "application/json" } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  };
}

describe("admin API behind X-Admin-Key", () => {
  it("refuses a missing or wrong key with 401 on every operation", async () => {
    const operations: Array<[string, string, unknown?]> = [
      ["GET", "/admin/tokens"],
      ["POST", "/admin/tokens", { kind: "org", crews: "*" }],
      ["DELETE", "/admin/tokens/tok_0000000000000000"],
      ["GET", "/admin/clients"],
      ["POST", "/admin/clients", { crews: "*" }],
      ["DELETE", "/admin/clients/client_0000000000000000"],
    ];
    for (const [method, path, body] of operations) {
      for (const key of [null, "", adminKey.slice(0, -1), adminKey + "x", adminKey.toUpperCase()]) {
        const res = await admin(method, path, body, key);
        expect(res.status, `${method} ${path} with ${JSON.stringify(key)}`).toBe(401);
        expect(res.body).toEqual({ error: "Unauthorized", message: "Invalid or missing X-Admin-Key header" });
      }
    }
    expect((await admin("GET", "/admin/tokens")).status).toBe(200);
  });

  it("creates a token shown once, lists it without the secret, and revokes it", async () => {
    const created = await admin("POST", "/admin/tokens", {
      kind: "user",
      crews: ["research"],
      user: "carol",
      ttl_seconds: 600,
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const token = created.body!.token as string;
    const id = created.body!.id as string;
    expect(created.body).toEqual({
      token: expect.stringMatching(/^kcu_[A-Za-z0-9_-]{43}$/),
      id: expect.stringMatching(/^tok_/),
      kind: "user",
      crews: ["research"],
      subject: "carol",
      created: expect.any(String),
      expires: expect.any(String),
    });
    expect((await fetch(`${api.url}/inputs`, { headers: bearer(token) })).status).toBe(200);

    const listed = await admin("GET", "/admin/tokens");
    const tokens = listed.body!.tokens as Array<Record<string, unknown>>;
    expect(tokens.find((t) => t.id === id)).toEqual({ ...created.body, token: undefined });
    expect(JSON.stringify(listed.body)).not.toContain(token);

    expect((await admin("DELETE", `/admin/tokens/${id}`)).status).toBe(204);
    expect((await fetch(`${api.url}/inputs`, { headers: bearer(token) })).status).toBe(401);
    const again = await admin("DELETE", `/admin/tokens/${id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: "Not Found", message: `No token with id ${id}` });
  });

  it("rejects malformed token requests with 400 naming the field", async () => {
    const cases: Array<[unknown, string]> = [
      [{ kind: "user", crews: "*" }, "user"],
      [{ kind: "org", crews: "*", user: "dave" }, "user"],
      [{ kind: "admin", crews: "*" }, "kind"],
      [{ kind: "org", crews: [] }, "crews"],
      [{ kind: "org", crews: ["Not A Crew"] }, "crews.0"],
      [{ kind: "org", crews: "*", ttl_seconds: 0 }, "ttl_seconds"],
      [{ kind: "org", crews: "*", extra: true }, "(body)"],
    ];
    for (const [body, field] of cases) {
      const res = await admin("POST", "/admin/tokens", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body!.error).toBe("Bad Request");
      expect(
        (res.body!.details as Array<{ field: string }>).map((d) => d.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    const broken = await fetch(`${api.url}/admin/tokens`, {
      method: "POST",
      headers: { "x-admin-key": adminKey, "content-type": "application/json" },
      body: "{",
    });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toEqual({ error: "Bad Request", message: "Request body is not valid JSON" });
  });

  it("creates a client whose secret works at the token endpoint, lists it without the secret, and revokes it", async () => {
    const created = await admin("POST", "/admin/clients", { crews: ["research"], role: "user", name: "nightly" });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect(created.body).toEqual({
      client_id: expect.stringMatching(/^client_[0-9a-f]{16}$/),
      client_secret: expect.stringMatching(/^kcs_[A-Za-z0-9_-]{43}$/),
      role: "user",
      crews: ["research"],
      name: "nightly",
      created: expect.any(String),
    });
    const clientId = created.body!.client_id as string;
    const secret = created.body!.client_secret as string;
    const tokens = await clientCredentialsToken(`${api.url}/oauth/token`, clientId, secret);
    expect((await fetch(`${api.url}/inputs`, { headers: bearer(tokens.access_token) })).status).toBe(200);

    const listed = await admin("GET", "/admin/clients");
    const clients = listed.body!.clients as Array<Record<string, unknown>>;
    expect(clients.find((c) => c.client_id === clientId)).toEqual({ ...created.body, client_secret: undefined });
    expect(JSON.stringify(listed.body)).not.toContain(secret);

    expect((await admin("DELETE", `/admin/clients/${clientId}`)).status).toBe(204);
    expect((await fetch(`${api.url}/inputs`, { headers: bearer(tokens.access_token) })).status).toBe(401);
    expect((await tokenRequest(api.url, { authorization: basic(clientId, secret) })).status).toBe(401);
    expect((await admin("DELETE", `/admin/clients/${clientId}`)).status).toBe(404);
    expect((await admin("POST", "/admin/clients", { crews: "*", role: "root" })).status).toBe(400);
  });

  it("is in the OpenAPI document", async () => {
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string; parameters?: Array<{ name: string; in: string }> }>>;
    };
    const operations = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith("/admin/"))
      .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => `${method} ${path} ${op.operationId}`));
    expect(operations.sort()).toEqual([
      "delete /admin/clients/{clientId} revokeClient",
      "delete /admin/tokens/{id} revokeToken",
      "get /admin/clients listClients",
      "get /admin/tokens listTokens",
      "post /admin/clients createClient",
      "post /admin/tokens createToken",
    ]);
    expect(doc.paths["/admin/tokens"]!.get!.parameters).toContainEqual(
      expect.objectContaining({ name: "X-Admin-Key", in: "header" }),
    );
  });
});
