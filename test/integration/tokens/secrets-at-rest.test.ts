import { createHash } from "node:crypto";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../core/logger.ts";
import { startRedis, type RedisServer } from "../../support/redis.ts";
import {
  basic,
  bearer,
  clientCredentialsToken,
  dumpRedis,
  kubecrew,
  startTokensDev,
  tokenRequest,
  type TokensDev,
} from "./support.ts";

const adminKey = "secrets-at-rest-admin-key-0123456789";
const logLines: string[] = [];
let redisServer: RedisServer;
let api: TokensDev;

beforeAll(async () => {
  redisServer = await startRedis(); // a Redis of its own: the dump below is every key there is
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString("utf8"));
      done();
    },
  });
  api = await startTokensDev(redisServer.url, { KUBECREW_ADMIN_KEY: adminKey }, createLogger({ level: "trace" }, sink));
});
afterAll(async () => {
  await api?.stop();
  await redisServer?.stop();
});

describe("secrets at rest", () => {
  it("keeps no token, client secret or admin key in clear in Redis or in the logs", async () => {
    const secrets: string[] = [adminKey];
    const env = { KUBECREW_REDIS_URL: redisServer.url, KUBECREW_REDIS_KEY_PREFIX: api.prefix };

    // Every way a credential comes to exist: the CLI, the admin API, the token endpoint.
    const cliOrg = await kubecrew(["token", "create", "--crew", "*", "--kind", "org", "--json"], env);
    const cliUser = await kubecrew(
      ["token", "create", "--crew", "research", "--kind", "user", "--user", "u1", "--ttl", "1h", "--json"],
      env,
    );
    const cliClient = await kubecrew(["client", "create", "--crew", "*", "--json"], env);
    secrets.push(
      JSON.parse(cliOrg.stdout).token,
      JSON.parse(cliUser.stdout).token,
      JSON.parse(cliClient.stdout).client_secret,
    );

    const adminHeaders = { "x-admin-key": adminKey, "content-type": "application/json" };
    const adminToken = (await (
      await fetch(`${api.url}/admin/tokens`, {
        method: "POST",
        headers: adminHeaders,
        body: JSON.stringify({ kind: "org", crews: "*" }),
      })
    ).json()) as { token: string };
    const adminClient = (await (
      await fetch(`${api.url}/admin/clients`, {
        method: "POST",
        headers: adminHeaders,
        body: JSON.stringify({ crews: "*", role: "user" }),
      })
    ).json()) as { client_id: string; client_secret: string };
    secrets.push(adminToken.token, adminClient.client_secret);

    const cliClientId = JSON.parse(cliClient.stdout).client_id as string;
    const cliClientSecret = JSON.parse(cliClient.stdout).client_secret as string;
    for (let i = 0; i < 3; i++) {
      secrets.push((await clientCredentialsToken(`${api.url}/oauth/token`, cliClientId, cliClientSecret)).access_token);
      secrets.push(
        (await clientCredentialsToken(`${api.url}/oauth/token`, adminClient.client_id, adminClient.client_secret))
          .access_token,
      );
    }
    // Failed attempts and requests carrying the secrets in the wrong places leave nothing either.
    await tokenRequest(api.url, { authorization: basic(cliClientId, "kcs_wrong-secret-guess") });
    await tokenRequest(api.url, {
      body: `grant_type=client_credentials&client_id=${cliClientId}&client_secret=${cliClientSecret}`,
    });
    for (const token of secrets.slice(1)) await fetch(`${api.url}/inputs`, { headers: bearer(token) });

    expect(secrets).toHaveLength(12);
    for (const secret of secrets) expect(secret.length).toBeGreaterThan(30);

    const dump = await dumpRedis(api.redis);
    expect(dump.split("\n").length).toBeGreaterThan(10); // tokens, ids, indexes, clients, rate-limit counters
    for (const secret of secrets) {
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(secret.slice(4)); // nor the random part without its prefix
    }
    expect(dump).not.toMatch(/kc[ouas]_[A-Za-z0-9_-]{20,}/);
    // What is there instead: the SHA-256 of each token.
    for (const token of secrets.slice(1, 3)) {
      expect(dump).toContain(createHash("sha256").update(token).digest("hex"));
    }

    const logs = logLines.join("");
    expect(logs).toContain("Access token issued");
    expect(logs).toContain("Client authentication failed");
    for (const secret of secrets) expect(logs).not.toContain(secret);
    expect(logs).not.toContain("kcs_wrong-secret-guess");
  });
});
