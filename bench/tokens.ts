/**
 * bench/tokens: the Redis-backed auth path against a bare express endpoint doing one Redis GET, measured in the same
 * run on the same Redis, every load once per round:
 *   - tokens issued per second: POST /oauth/token (client credentials, Basic auth, both rate limiters, one issue);
 *   - bearer auth alone: express + the crew API's bearerAuth middleware on the Redis token store, answering {};
 *   - the crew API: GET /inputs with an org token (auth + crew lookup + input discovery).
 * For each: requests per second and the servers' CPU time per request, with their ratios to the baseline (median of
 * the per-round ratios). CPU per request is the steadier figure on a machine shared with other work.
 *   npm run bench:tokens   [BENCH_SECONDS=5 BENCH_CONNECTIONS=20 BENCH_ROUNDS=3]
 */
import express from "express";
import { createRedisAuth } from "../api/auth/api-auth.ts";
import { bearerAuth } from "../api/auth/bearer.ts";
import { authConfigSchema } from "../api/auth/config.ts";
import { connectRedis, redisReady } from "../platform/redis-client.ts";
import { startApi } from "../api/server.ts";
import { silentLogger } from "../core/logger.ts";
import { loadCrews } from "../dev/crew-catalog.ts";
import { repoRoot } from "../dev/config.ts";
import { LocalExecutions } from "../dev/local-executions.ts";
import { startRedis } from "../test/support/redis.ts";
import { listen, measureRounds, median, type Load } from "./load.ts";
import { createOutboundClient } from "../platform/outbound/outbound-fetch.ts";
import { localPolicy } from "../core/outbound/policy.ts";

const log = silentLogger();

const redisServer = await startRedis();
const redis = connectRedis(redisServer.url, { log });
await redisReady(redis);

// The crew API as `kubecrew api` wires it, with limits far above what the benchmark sends.
const config = authConfigSchema.parse({
  KUBECREW_OAUTH_RATE_LIMIT_PER_CLIENT: "1000000000",
  KUBECREW_OAUTH_RATE_LIMIT_PER_IP: "1000000000",
});
const auth = createRedisAuth({ redis, config, log });
const executions = new LocalExecutions({
  crews: await loadCrews(`${repoRoot}examples`),
  workRoot: "/tmp",
  runnerCommand: [],
  runnerEnv: {},
  maxTasks: 1,
  log,
  webhookFetch: createOutboundClient(localPolicy).fetch,
});
const api = await startApi({
  backend: executions,
  tokens: auth.tokens,
  extraRouters: auth.routers,
  extraPaths: auth.paths,
  defaultCrew: "research",
  log,
  bodyLimitBytes: 1024 * 1024,
  outboundPolicy: localPolicy,
  host: "127.0.0.1",
  port: 0,
});
const { token: orgToken } = await auth.tokens.createToken({ kind: "org", crews: "*" });
const { record: client, clientSecret } = await auth.tokens.createClient({ role: "org", crews: "*" });
const basicAuth = "Basic " + Buffer.from(`${client.clientId}:${clientSecret}`).toString("base64");

await redis.set("bench:value", JSON.stringify({ kind: "org", crews: "*", subject: "bench" }));
const bare = express();
bare.get("/get", async (_req, res) => {
  res.json({ value: await redis.get("bench:value") });
});
const bareServer = await listen(bare);

const authOnly = express();
authOnly.get("/authenticated", bearerAuth(auth.tokens), (_req, res) => {
  res.json({});
});
const authServer = await listen(authOnly);

const loads: Load[] = [
  { name: "bare express + 1 Redis GET", options: { url: `${bareServer.url}/get` } },
  {
    name: "POST /oauth/token (issue)",
    options: {
      url: `${api.url}/oauth/token`,
      method: "POST",
      headers: { authorization: basicAuth, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials",
    },
  },
  {
    name: "bearerAuth alone",
    options: { url: `${authServer.url}/authenticated`, headers: { authorization: `Bearer ${orgToken}` } },
  },
  {
    name: "crew API GET /inputs",
    options: { url: `${api.url}/inputs`, headers: { authorization: `Bearer ${orgToken}` } },
  },
];

const rounds = await measureRounds(loads);
console.log(rounds.table());
const [, issue, bearerOnly, crewApi] = loads.map((l) => l.name) as [string, string, string, string];
console.log(
  `  tokens issued per second: ${median(rounds.of(issue, "rps")).toFixed(0)} = ${rounds.rpsRatio(issue).toFixed(2)} × the baseline's ` +
    `requests per second; ${rounds.cpuRatio(issue).toFixed(2)} × its CPU per request`,
);
console.log(
  `  auth overhead: bearerAuth alone ${rounds.rpsRatio(bearerOnly).toFixed(2)} × baseline req/s, ` +
    `${rounds.cpuRatio(bearerOnly).toFixed(2)} × its CPU (${rounds.extraCpuUs(bearerOnly).toFixed(0)} µs more per request); ` +
    `crew API GET /inputs ${rounds.rpsRatio(crewApi).toFixed(2)} × req/s, ${rounds.cpuRatio(crewApi).toFixed(2)} × CPU ` +
    `(${rounds.extraCpuUs(crewApi).toFixed(0)} µs more)`,
);

bareServer.close();
authServer.close();
await api.stop();
executions.close();
redis.disconnect();
await redisServer.stop();
