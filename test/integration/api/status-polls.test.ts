import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { bearer, startTokensDev, waitFor, type TokensDev } from "../tokens/support.ts";

/**
 * `GET /status` polls: the one status route answers the ones its caches can answer at once without awaiting anything (api/routes/status-route.ts),
 * with tokens in Redis and the verified-token memory as `kubecrew api` runs. Whichever way a poll is answered, its
 * status, headers and body are the documented ones, and a revoked token, another user's execution, a token for other
 * crews are refused as always.
 */
const adminKey = "status-polls-admin-key-0123456789abcdef";
let api: TokensDev;
let org: string;
let alice: string;
let bob: string;
let otherCrews: string;
let done: string;

const poll = (path: string, token?: string, init: RequestInit = {}) =>
  fetch(api.url + path, { ...init, headers: { ...(token ? bearer(token) : {}), ...(init.headers ?? {}) } });

/** What a client can see of an answer: status, the headers that describe the body, and the body. */
async function seen(res: Response) {
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    contentLength: res.headers.get("content-length"),
    wwwAuthenticate: res.headers.get("www-authenticate"),
    body: await res.text(),
  };
}

async function kickoff(token: string): Promise<string> {
  const res = await fetch(`${api.url}/crews/research/kickoff`, {
    method: "POST",
    headers: { ...bearer(token), "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic: "polls" } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { kickoff_id: string }).kickoff_id;
}

beforeAll(async () => {
  api = await startTokensDev(inject("redisUrl"), { KUBECREW_ADMIN_KEY: adminKey });
  org = (await api.store.createToken({ kind: "org", crews: "*" })).token;
  alice = (await api.store.createToken({ kind: "user", crews: "*", user: "alice" })).token;
  bob = (await api.store.createToken({ kind: "user", crews: "*", user: "bob" })).token;
  otherCrews = (await api.store.createToken({ kind: "org", crews: ["someone-else"] })).token;
  done = await kickoff(org);
  await waitFor(async () => {
    const body = (await (await poll(`/crews/research/status/${done}`, org)).json()) as { status: string };
    return body.status === "completed" ? body : undefined;
  }, 30_000);
});
afterAll(() => api?.stop());

describe("status polls", () => {
  it("answers the same status, headers and bytes however the poll is spelt", async () => {
    const expected = await seen(await poll(`/crews/research/status/${done}`, org));
    expect(expected).toMatchObject({ status: 200, contentType: "application/json; charset=utf-8" });
    expect(JSON.parse(expected.body)).toMatchObject({ status: "completed", state: "SUCCESS" });
    expect(Number(expected.contentLength)).toBe(Buffer.byteLength(expected.body));
    // Routed spellings (trailing slash, query, upper-case id or path) and the default crew's root paths.
    for (const path of [
      `/crews/research/status/${done}`,
      `/crews/research/${done}/status`,
      `/crews/research/status/${done}/`,
      `/crews/research/status/${done}?fresh=1`,
      `/crews/research/status/${done.toUpperCase()}`,
      `/CREWS/research/STATUS/${done}`,
      `/status/${done}`,
      `/${done}/status`,
    ]) {
      expect({ path, ...(await seen(await poll(path, org))) }).toEqual({ path, ...expected });
    }
  });

  const refused = {
    status: 401,
    contentType: "application/json; charset=utf-8",
    contentLength: expect.any(String),
    wwwAuthenticate: "Bearer",
    body: JSON.stringify({ error: "Unauthorized", message: "Invalid or missing bearer token" }),
  };

  it("refuses a token revoked through this API at once, right after polls answered from memory", async () => {
    const { token, record } = await api.store.createToken({ kind: "org", crews: "*" });
    for (let i = 0; i < 3; i++) expect((await poll(`/status/${done}`, token)).status).toBe(200);
    const revoked = await fetch(`${api.url}/admin/tokens/${record.id}`, {
      method: "DELETE",
      headers: { "x-admin-key": adminKey },
    });
    expect(revoked.status).toBe(204);
    expect(await seen(await poll(`/status/${done}`, token))).toEqual(refused);
    // The org token verified before the revocation is verified again, not refused.
    expect((await poll(`/status/${done}`, org)).status).toBe(200);
  });

  it("refuses a token another replica revoked as soon as its revocation message arrives, well within the memory's 2 s", async () => {
    const { token, record } = await api.store.createToken({ kind: "org", crews: "*" });
    for (let i = 0; i < 3; i++) expect((await poll(`/status/${done}`, token)).status).toBe(200);
    // api.store is another replica's store (no memory of its own): this API hears of it on the revocation channel.
    expect(await api.store.revokeToken(record.id)).toBe(true);
    const answer = await waitFor(async () => {
      const res = await seen(await poll(`/status/${done}`, token));
      return res.status === 401 ? res : undefined;
    }, 1000);
    expect(answer).toEqual(refused);
  });

  it("shows a user only the executions it started, and answers every refusal with its documented body", async () => {
    const mine = await kickoff(alice);
    for (let i = 0; i < 3; i++) expect((await poll(`/crews/research/status/${mine}`, alice)).status).toBe(200);
    const notFound = (id: string) => ({ error: "Execution not found", message: `No execution found with ID: ${id}` });
    const bobs = await poll(`/crews/research/status/${mine}`, bob);
    expect({ status: bobs.status, body: await bobs.json() }).toEqual({ status: 404, body: notFound(mine) });
    const others = await poll(`/crews/research/status/${done}`, alice);
    expect({ status: others.status, body: await others.json() }).toEqual({ status: 404, body: notFound(done) });

    const unknown = "00000000-0000-4000-8000-000000000000";
    const missing = await poll(`/crews/research/status/${unknown}`, org);
    expect({ status: missing.status, body: await missing.json() }).toEqual({ status: 404, body: notFound(unknown) });
    const noCrew = await poll(`/crews/no-such-crew/status/${done}`, org);
    expect({ status: noCrew.status, body: await noCrew.json() }).toEqual({
      status: 404,
      body: { error: "Crew not found", message: 'No crew named "no-such-crew"' },
    });
    const unauthorized = { error: "Unauthorized", message: "Invalid or missing bearer token" };
    for (const token of [otherCrews, "kco_not-a-token", undefined]) {
      const res = await poll(`/crews/research/status/${done}`, token);
      expect({ status: res.status, auth: res.headers.get("www-authenticate"), body: await res.json() }).toEqual({
        status: 401,
        auth: "Bearer",
        body: unauthorized,
      });
    }
  });

  it("answers HEAD, OPTIONS and wrong methods on a status path as the routes do", async () => {
    const head = await poll(`/crews/research/status/${done}`, org, { method: "HEAD" });
    const get = await seen(await poll(`/crews/research/status/${done}`, org));
    expect({ status: head.status, length: head.headers.get("content-length"), body: await head.text() }).toEqual({
      status: 200,
      length: get.contentLength,
      body: "",
    });
    const options = await poll(`/crews/research/status/${done}`, org, { method: "OPTIONS" });
    expect({ status: options.status, allow: options.headers.get("allow") }).toEqual({
      status: 204,
      allow: "GET, HEAD",
    });
    const post = await poll(`/crews/research/status/${done}`, org, { method: "POST" });
    expect({ status: post.status, allow: post.headers.get("allow"), body: await post.json() }).toEqual({
      status: 405,
      allow: "GET, HEAD",
      body: { error: "Method Not Allowed", message: `Use GET for /crews/research/status/${done}` },
    });
  });
});
