import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { basic, bearer, kubecrew, startTokensDev, tokenRequest, type TokensDev } from "./support.ts";

let api: TokensDev;
let env: Record<string, string>;

beforeAll(async () => {
  api = await startTokensDev(inject("redisUrl"));
  env = { KUBECREW_REDIS_URL: inject("redisUrl"), KUBECREW_REDIS_KEY_PREFIX: api.prefix };
});
afterAll(() => api?.stop());

describe("kubecrew token", () => {
  it("creates an org token that `kubecrew dev` with KUBECREW_REDIS_URL accepts, lists it, and revokes it", async () => {
    const created = await kubecrew(["token", "create", "--crew", "research", "--kind", "org", "--ttl", "30d"], env);
    expect(created.code).toBe(0);
    const token = /^token: +(kco_[A-Za-z0-9_-]{43})$/m.exec(created.stdout)![1]!;
    const id = /^id: +(tok_[0-9a-f]{16})$/m.exec(created.stdout)![1]!;
    expect(created.stdout).toMatch(/^expires: +\d{4}-\d\d-\d\dT/m);
    expect(created.stderr).toContain("it is not shown again");
    expect((await fetch(`${api.url}/inputs`, { headers: bearer(token) })).status).toBe(200);
    expect((await fetch(`${api.url}/crews/another/inputs`, { headers: bearer(token) })).status).toBe(401);

    const listed = await kubecrew(["token", "list"], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^ID +KIND +CREWS +SUBJECT +CREATED +EXPIRES$/m);
    expect(listed.stdout).toMatch(new RegExp(`^${id} +org +research `, "m"));
    expect(listed.stdout).not.toContain(token);

    const revoked = await kubecrew(["token", "revoke", id], env);
    expect(revoked).toMatchObject({ code: 0, stdout: `Revoked token ${id}\n` });
    expect((await fetch(`${api.url}/inputs`, { headers: bearer(token) })).status).toBe(401);
    const again = await kubecrew(["token", "revoke", id], env);
    expect(again).toMatchObject({ code: 1, stderr: `No token with id ${id}\n` });
  });

  it("creates a user token for a user, with JSON output", async () => {
    const created = await kubecrew(
      ["token", "create", "--crew", "*", "--kind", "user", "--user", "erin", "--json"],
      env,
    );
    expect(created.code).toBe(0);
    const body = JSON.parse(created.stdout) as { token: string; kind: string; subject: string; crews: string };
    expect(body).toMatchObject({ kind: "user", subject: "erin", crews: "*" });
    expect(await api.store.verify(body.token)).toEqual({ kind: "user", crews: "*", subject: "erin" });
  });

  it("explains wrong options in one line and exits 1", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["token", "create", "--crew", "research", "--kind", "user"], /^--user: user is required for a user token/],
      [["token", "create", "--crew", "Research", "--kind", "org"], /^--crew: a crew name/],
      [["token", "create", "--crew", "research", "--kind", "root"], /^--kind: /],
      [["token", "create", "--crew", "research", "--kind", "org", "--ttl", "soon"], /^--ttl: "soon" is not a duration/],
    ];
    for (const [args, message] of cases) {
      const run = await kubecrew(args, env);
      expect(run.code, args.join(" ")).toBe(1);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe("");
    }
  });

  it("names a missing KUBECREW_REDIS_URL and an unreachable Redis, each in one line, exit 1", async () => {
    const missing = await kubecrew(["token", "list"], {});
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^kubecrew token: Invalid configuration: KUBECREW_REDIS_URL: is required: the Redis/,
    );
    const unreachable = await kubecrew(["token", "list"], { KUBECREW_REDIS_URL: "redis://127.0.0.1:1" });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(
      /^Cannot reach Redis \(KUBECREW_REDIS_URL\): connect ECONNREFUSED 127\.0\.0\.1:1/,
    );
  });
});

describe("kubecrew client", () => {
  it("creates a client whose credentials work at POST /oauth/token, lists it, and revokes it", async () => {
    const created = await kubecrew(["client", "create", "--crew", "research", "--role", "user", "--name", "ci"], env);
    expect(created.code).toBe(0);
    const clientId = /^client_id: +(client_[0-9a-f]{16})$/m.exec(created.stdout)![1]!;
    const secret = /^client_secret: +(kcs_[A-Za-z0-9_-]{43})$/m.exec(created.stdout)![1]!;
    expect(created.stdout).toMatch(/^role: +user$/m);
    expect(created.stderr).toContain("it is not shown again");

    const issued = await tokenRequest(api.url, { authorization: basic(clientId, secret) });
    expect(issued.status).toBe(200);
    const accessToken = issued.body.access_token as string;
    expect(await api.store.verify(accessToken)).toEqual({ kind: "user", crews: ["research"], subject: clientId });

    const listed = await kubecrew(["client", "list"], env);
    expect(listed.stdout).toMatch(/^CLIENT_ID +ROLE +CREWS +NAME +CREATED$/m);
    expect(listed.stdout).toMatch(new RegExp(`^${clientId} +user +research +ci `, "m"));
    expect(listed.stdout).not.toContain(secret);

    const revoked = await kubecrew(["client", "revoke", clientId], env);
    expect(revoked.code).toBe(0);
    expect(await api.store.verify(accessToken)).toBeUndefined();
    expect((await tokenRequest(api.url, { authorization: basic(clientId, secret) })).status).toBe(401);
    expect(await kubecrew(["client", "revoke", clientId], env)).toMatchObject({
      code: 1,
      stderr: `No client with id ${clientId}\n`,
    });
  });

  it("defaults to the org role and rejects an unknown one", async () => {
    const created = await kubecrew(["client", "create", "--crew", "*", "--json"], env);
    expect(JSON.parse(created.stdout)).toMatchObject({
      role: "org",
      crews: "*",
      client_secret: expect.stringMatching(/^kcs_/),
    });
    const wrong = await kubecrew(["client", "create", "--crew", "*", "--role", "admin"], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^--role: /);
  });
});
