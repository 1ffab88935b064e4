/**
 * bench/tokens: the Redis-backed auth path against a bare express endpoint doing one Redis GET, measured in the same
 * run on the same Redis, alternating rounds (median req/s of each):
 *   - tokens issued per second: POST /oauth/token (client credentials, Basic auth, both rate limiters, one issue);
 *   - bearer auth alone: express + the crew API's bearerAuth middleware on the Redis token store, answering {};
 *   - the crew API: GET /inputs with an org token (auth + crew lookup + input discovery).
 * The ratios say what each costs relative to the cheapest thing a Redis-backed endpoint can do.
 *   node bench/tokens.ts   [BENCH_SECONDS=5 BENCH_CONNECTIONS=20 BENCH_ROUNDS=3]
 */
import autocannon from "autocannon";
import express from "express";
import type { AddressInfo } from "node:net";
import { createRedisAuth } from "../api/auth/api-auth.ts";
import { bearerAuth } from "../api/auth/bearer.ts";
import { authConfigSchema } from "../api/auth/config.ts";
import { connectRedis, redisReady } from "../api/auth/redis-client.ts";
import { startApi } from "../api/server.ts";
import { silentLogger } from "../core/logger.ts";
import { loadCrews } from "../dev/crew-catalog.ts";
import { repoRoot } from "../dev/config.ts";
import { LocalExecutions } from "../dev/local-executions.ts";
import { startRedis } from "../test/support/redis.ts";

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
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
  log,
});
const api = await startApi({
  backend: executions,
  tokens: auth.tokens,
  extraRouters: auth.routers,
  extraPaths: auth.paths,
  defaultCrew: "research",
  log,
  bodyLimitBytes: 1024 * 1024,
  host: "127.0.0.1",
  port: 0,
});
const { token: orgToken } = await auth.tokens.createToken({ kind: "org", crews: "*" });
const { record: client, clientSecret } = await auth.tokens.createClient({ role: "org", crews: "*" });
const basicAuth = "Basic " + Buffer.from(`${client.clientId}:${clientSecret}`).toString("base64");

async function listen(app: express.Express): Promise<{ url: string; close(): void }> {
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

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

interface Load {
  name: string;
  options: autocannon.Options;
}
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

async function measure(load: Load): Promise<{ rps: number; p99: number }> {
  const result = await autocannon({ ...load.options, connections, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${load.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return { rps: result.requests.average, p99: result.latency.p99 };
}

for (const load of loads) await autocannon({ ...load.options, connections, duration: 1 }); // warm-up, untimed
const results = new Map(loads.map((l) => [l.name, [] as Array<{ rps: number; p99: number }>]));
for (let round = 0; round < rounds; round++) {
  for (const load of loads) results.get(load.name)!.push(await measure(load));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rpsOf = (name: string) => results.get(name)!.map((r) => r.rps);
const baselineName = loads[0]!.name;
// Each round runs every load back to back, so the ratio within a round compares like with like even when the
// machine's load drifts between rounds; the median of those ratios is the figure to quote.
const ratio = (name: string) => median(rpsOf(name).map((rps, round) => rps / rpsOf(baselineName)[round]!));
console.log(`${connections} connections, ${rounds} rounds of ${seconds}s each`);
console.log(
  `  ${"".padEnd(28)} ${"median req/s".padStart(12)}  ${"p99".padStart(6)}  ratio to baseline (median of per-round ratios)`,
);
for (const load of loads) {
  const each = rpsOf(load.name)
    .map((r) => r.toFixed(0))
    .join(", ");
  const p99 = median(results.get(load.name)!.map((r) => r.p99));
  console.log(
    `  ${load.name.padEnd(28)} ${median(rpsOf(load.name)).toFixed(0).padStart(12)}  ${`${p99} ms`.padStart(6)}  ` +
      `${ratio(load.name).toFixed(2)}   (rounds: ${each})`,
  );
}
const [, issue, bearerOnly, crewApi] = loads.map((l) => l.name);
console.log(`  tokens issued per second: ${median(rpsOf(issue!)).toFixed(0)} (${ratio(issue!).toFixed(2)} × baseline)`);
console.log(
  `  auth overhead: bearerAuth alone ${ratio(bearerOnly!).toFixed(2)} × baseline, ` +
    `crew API GET /inputs ${ratio(crewApi!).toFixed(2)} × baseline`,
);

bareServer.close();
authServer.close();
await api.stop();
executions.close();
redis.disconnect();
await redisServer.stop();
