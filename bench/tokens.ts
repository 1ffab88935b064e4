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
import type autocannon from "autocannon";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
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
const run = promisify(execFile);
const autocannonCli = `${repoRoot}node_modules/autocannon/autocannon.js`;

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

interface Measurement {
  rps: number;
  p99: number;
  /** CPU time of this process (the servers under test) per request, in microseconds. */
  cpuUs: number;
}

/**
 * One load, driven by the autocannon CLI in a child process, so that this process's CPU time is the servers' alone:
 * CPU per request barely moves when other work competes for the machine, unlike requests per second.
 */
async function measure(load: Load, duration = seconds): Promise<Measurement> {
  const { url, method, headers, body } = load.options;
  const args = [autocannonCli, "-j", "-c", String(connections), "-d", String(duration)];
  if (method) args.push("-m", method);
  for (const [name, value] of Object.entries(headers ?? {})) args.push("-H", `${name}=${value}`);
  if (body) args.push("-b", String(body));
  args.push(String(url));
  const before = process.cpuUsage();
  const { stdout } = await run(process.execPath, args);
  const cpu = process.cpuUsage(before);
  const result = JSON.parse(stdout) as autocannon.Result;
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${load.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    cpuUs: (cpu.user + cpu.system) / result.requests.total,
  };
}

for (const load of loads) await measure(load, 1); // warm-up, untimed
const results = new Map(loads.map((l) => [l.name, [] as Measurement[]]));
for (let round = 0; round < rounds; round++) {
  for (const load of loads) results.get(load.name)!.push(await measure(load));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const of = (name: string, field: keyof Measurement) => results.get(name)!.map((r) => r[field]);
const baselineName = loads[0]!.name;
// Each round runs every load back to back, so a ratio within a round compares like with like even when the
// machine's load drifts between rounds; the median of the per-round ratios is the figure to quote.
const rpsRatio = (name: string) => median(of(name, "rps").map((rps, i) => rps / of(baselineName, "rps")[i]!));
const cpuRatio = (name: string) => median(of(name, "cpuUs").map((cpu, i) => cpu / of(baselineName, "cpuUs")[i]!));
console.log(`${connections} connections, ${rounds} rounds of ${seconds}s each; medians`);
console.log(
  `  ${"".padEnd(28)} ${"req/s".padStart(7)} ${"× base".padStart(7)} ${"p99".padStart(6)} ${"CPU/req".padStart(9)} ${"× base".padStart(7)}`,
);
for (const load of loads) {
  const name = load.name;
  console.log(
    `  ${name.padEnd(28)} ${median(of(name, "rps")).toFixed(0).padStart(7)} ${rpsRatio(name).toFixed(2).padStart(7)} ` +
      `${`${median(of(name, "p99"))} ms`.padStart(6)} ${`${median(of(name, "cpuUs")).toFixed(0)} µs`.padStart(9)} ` +
      `${cpuRatio(name).toFixed(2).padStart(7)}   (req/s by round: ${of(name, "rps")
        .map((r) => r.toFixed(0))
        .join(", ")})`,
  );
}
const [, issue, bearerOnly, crewApi] = loads.map((l) => l.name) as [string, string, string, string];
const extraUs = (name: string) => median(of(name, "cpuUs").map((cpu, i) => cpu - of(baselineName, "cpuUs")[i]!));
console.log(
  `  tokens issued per second: ${median(of(issue, "rps")).toFixed(0)} = ${rpsRatio(issue).toFixed(2)} × the baseline's ` +
    `requests per second; ${cpuRatio(issue).toFixed(2)} × its CPU per request`,
);
console.log(
  `  auth overhead: bearerAuth alone ${rpsRatio(bearerOnly).toFixed(2)} × baseline req/s, ` +
    `${cpuRatio(bearerOnly).toFixed(2)} × its CPU (${extraUs(bearerOnly).toFixed(0)} µs more per request); ` +
    `crew API GET /inputs ${rpsRatio(crewApi).toFixed(2)} × req/s, ${cpuRatio(crewApi).toFixed(2)} × CPU ` +
    `(${extraUs(crewApi).toFixed(0)} µs more)`,
);

bareServer.close();
authServer.close();
await api.stop();
executions.close();
redis.disconnect();
await redisServer.stop();
