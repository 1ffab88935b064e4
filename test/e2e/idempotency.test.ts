import { spawn, execFile, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { idempotencyKeyHash } from "../../core/idempotency.ts";
import { startRedis, type RedisServer } from "../support/redis.ts";
import { kubectl } from "./support/kubectl.ts";
import {
  applyCrew,
  createNamespace,
  crewYaml,
  deleteNamespace,
  freePort,
  nodeBinary,
  repo,
  waitFor,
  type Loose,
} from "./support/fixture.ts";
import { installed } from "./support/installed.ts";

/**
 * Kickoff idempotency in cluster mode: `kubecrew api` processes (replicas) sharing one apiserver and one Redis. The
 * Idempotency-Key is recorded on the CrewExecution, so a retry answers the first kickoff_id whichever replica gets it,
 * also after the replica that created the run was SIGKILLed and a new one started.
 */
const cli = join(repo, "cli/main.ts");
const kubeconfig = inject("kubeconfig");
let namespace: string;
let redis: RedisServer;
let token: string;
let subject: string;
const apis: ChildProcess[] = [];

async function startApiProcess(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(nodeBinary, [cli, "api"], {
    cwd: repo,
    env: {
      ...process.env,
      KUBECONFIG: kubeconfig,
      POD_NAMESPACE: namespace,
      KUBECREW_REDIS_URL: redis.url,
      HOST: "127.0.0.1",
      PORT: String(port),
      // Two of these processes run at once: each its own metrics port.
      KUBECREW_API_METRICS_PORT: "0",
      KUBECREW_DEFAULT_CREW: "notes",
      LOG_LEVEL: "warn",
    },
    stdio: "ignore",
  });
  apis.push(child);
  await waitFor("kubecrew api ready", async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.ok);
  return { url, child };
}

function kickoff(url: string, body: unknown, key: string) {
  return fetch(`${url}/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body),
  });
}
async function kickoffId(url: string, body: unknown, key: string): Promise<string> {
  const res = await kickoff(url, body, key);
  const answer = (await res.json()) as Loose;
  expect(res.status, JSON.stringify(answer)).toBe(200);
  return answer.kickoff_id;
}
const executions = async (): Promise<Loose[]> =>
  JSON.parse(await kubectl(kubeconfig, ["get", "crewexecutions", "-n", namespace, "-o", "json"])).items;

beforeAll(async () => {
  namespace = await createNamespace(kubeconfig, "idem");
  await applyCrew(kubeconfig, namespace, crewYaml("notes", "mock", { tasks: 1 }));
  redis = await startRedis();
  const { stdout } = await promisify(execFile)(
    nodeBinary,
    [cli, "token", "create", "--crew", "notes", "--kind", "org", "--json"],
    { env: { ...process.env, KUBECREW_REDIS_URL: redis.url } },
  );
  ({ token, subject } = JSON.parse(stdout) as { token: string; subject: string });
});

afterAll(async () => {
  for (const child of apis) child.kill("SIGKILL");
  await redis?.stop();
  if (namespace) await deleteNamespace(kubeconfig, namespace);
});

describe.skipIf(installed)("Idempotency-Key across API replicas and restarts", () => {
  it("starts one CrewExecution for one key, whichever replica answers and after the creating one is killed", async () => {
    const [a, b] = await Promise.all([startApiProcess(), startApiProcess()]);
    const key = "order-4711-retry-safe";
    const body = { inputs: { topic: "tides" }, meta: { order: 4711 } };

    // Both replicas at once, several times each: the apiserver creates one object, the others read it back.
    const ids = await Promise.all(
      Array.from({ length: 10 }, (_, i) => kickoffId(i % 2 === 0 ? a.url : b.url, body, key)),
    );
    expect(new Set(ids).size).toBe(1);
    const id = ids[0]!;
    const created = await executions();
    expect(created.map((e: Loose) => e.metadata.name)).toEqual([id]);

    // The CrewExecution records the key's hash (label and annotation) and the body's hash, never the key itself.
    const keyHash = idempotencyKeyHash({ crew: "notes", kind: "org", subject }, key);
    const [execution] = created;
    expect(execution.metadata.labels["kubecrew.io/idempotency-key"]).toBe(keyHash.slice(0, 63));
    expect(execution.metadata.annotations["kubecrew.io/idempotency-key-sha256"]).toBe(keyHash);
    expect(JSON.stringify(execution)).not.toContain(key);
    const selected = await kubectl(kubeconfig, [
      ...["get", "ce", "-n", namespace, "-l", `kubecrew.io/idempotency-key=${keyHash.slice(0, 63)}`],
      ...["-o", "jsonpath={.items[*].metadata.name}"],
    ]);
    expect(selected).toBe(id);

    // The replica that created it dies without a word; a new one (empty caches) answers the retry the same.
    a.child.kill("SIGKILL");
    const c = await startApiProcess();
    const retry = await kickoff(c.url, body, key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.json()).toEqual({ kickoff_id: id });
    expect(await kickoffId(b.url, body, key)).toBe(id);

    // The same key with another body is refused on every replica, and creates nothing.
    for (const url of [b.url, c.url]) {
      const reused = await kickoff(url, { ...body, inputs: { topic: "moss" } }, key);
      expect(reused.status).toBe(422);
      expect(await reused.json()).toMatchObject({
        error: "Unprocessable Entity",
        details: { idempotency_key: "reused with a different request body" },
      });
    }

    // Another key is another run.
    const other = await kickoffId(c.url, body, "order-4712");
    expect(other).not.toBe(id);
    expect((await executions()).map((e: Loose) => e.metadata.name).sort()).toEqual([id, other].sort());
  });
});
