import { spawn, execFile, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { join } from "node:path";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { startRedis, type RedisServer } from "../support/redis.ts";
import {
  applyCrew,
  createNamespace,
  crewYaml,
  deleteNamespace,
  freePort,
  nodeBinary,
  repo,
  startControllerProcess,
  waitFor,
  type ControllerProcess,
  type Loose,
} from "./support/fixture.ts";

/**
 * The deployed shape, end to end: `kubecrew api` as its own process in cluster mode (CrewExecutions in the
 * apiserver, tokens in Redis), a service account's client credentials exchanged at /oauth/token, a kickoff, and
 * the controller running the tasks as Job pods until the status says completed; then the API's metrics, scraped from
 * their own port, count that kickoff and those polls.
 */
const cli = join(repo, "cli/main.ts");
let kubeconfig: string;
let namespace: string;
let redis: RedisServer;
let api: ChildProcess;
let apiUrl: string;
let metricsUrl: string;
let controller: ControllerProcess;

beforeAll(async () => {
  kubeconfig = inject("kubeconfig");
  namespace = await createNamespace(kubeconfig, "apicmd");
  await applyCrew(kubeconfig, namespace, crewYaml("notes", "mock", { tasks: 2 }));
  redis = await startRedis();
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  api = spawn(nodeBinary, [cli, "api"], {
    cwd: repo,
    env: {
      ...process.env,
      KUBECONFIG: kubeconfig,
      POD_NAMESPACE: namespace,
      KUBECREW_REDIS_URL: redis.url,
      HOST: "127.0.0.1",
      PORT: String(port),
      KUBECREW_API_METRICS_HOST: "127.0.0.1",
      KUBECREW_API_METRICS_PORT: String(metricsPort),
      KUBECREW_DEFAULT_CREW: "notes",
      LOG_LEVEL: "warn",
    },
    stdio: "ignore",
  });
  await waitFor("kubecrew api listening", async () => (await fetch(`${apiUrl}/healthz`).catch(() => undefined))?.ok);
  controller = await startControllerProcess(kubeconfig, namespace);
});

afterAll(async () => {
  api?.kill("SIGTERM");
  await controller?.kill("SIGTERM");
  await redis?.stop();
  if (namespace) await deleteNamespace(kubeconfig, namespace);
});

it("exchanges client credentials for a token and runs a crew to completion through `kubecrew api`", async () => {
  const { stdout } = await promisify(execFile)(nodeBinary, [cli, "client", "create", "--crew", "notes", "--json"], {
    env: { ...process.env, KUBECREW_REDIS_URL: redis.url },
  });
  const client = JSON.parse(stdout) as { client_id: string; client_secret: string };

  const denied = await fetch(`${apiUrl}/inputs`);
  expect(denied.status).toBe(401);

  const tokenResponse = await fetch(`${apiUrl}/oauth/token`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
  expect(tokenResponse.status).toBe(200);
  const { access_token } = (await tokenResponse.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${access_token}`, "content-type": "application/json" };

  expect(await (await fetch(`${apiUrl}/inputs`, { headers })).json()).toEqual({ inputs: ["topic"] });
  const kickoff = await fetch(`${apiUrl}/kickoff`, {
    method: "POST",
    headers,
    body: JSON.stringify({ inputs: { topic: "moss" } }),
  });
  expect(kickoff.status).toBe(200);
  const { kickoff_id } = (await kickoff.json()) as { kickoff_id: string };

  const first = (await (await fetch(`${apiUrl}/status/${kickoff_id}`, { headers })).json()) as Loose;
  expect(["running", "completed"]).toContain(first.status);

  let polls = 1;
  const done = await waitFor(
    "execution completed",
    async () => {
      polls++;
      const body = (await (await fetch(`${apiUrl}/status/${kickoff_id}`, { headers })).json()) as Loose;
      return body.status === "running" ? undefined : body;
    },
    120_000,
    500,
  );
  expect(done).toMatchObject({ status: "completed" }); // on failure, the diff shows the error
  expect(done.result.tasks.map((t: Loose) => t.task_id)).toEqual(["step1", "step2"]);
  expect(done.result.tasks[0].agent).toBe("moss Writer");

  const scraped = await fetch(metricsUrl);
  expect(scraped.status).toBe(200);
  const text = await scraped.text();
  const value = (series: string) =>
    Number(
      text
        .split("\n")
        .find((line) => line.startsWith(`${series} `))
        ?.slice(series.length + 1) ?? 0,
    );
  expect(value(`kubecrew_api_kickoffs_total{crew="notes"}`)).toBe(1);
  expect(value(`kubecrew_api_requests_total{route="/kickoff",method="POST",status="200"}`)).toBe(1);
  expect(value(`kubecrew_api_requests_total{route="/crews/:crew/status/:id",method="GET",status="200"}`)).toBe(polls);
  expect(value(`kubecrew_api_requests_total{route="/oauth/token",method="POST",status="200"}`)).toBe(1);
  expect(text).not.toContain(kickoff_id);
});
