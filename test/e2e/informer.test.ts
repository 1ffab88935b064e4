import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { silentLogger } from "../../core/logger.ts";
import { cacheKey, Informer, withoutManagedFields } from "../../kube/runtime/informer.ts";
import { KubeClient, type KubeObject } from "../../kube/runtime/client.ts";
import { StringPool } from "../../kube/runtime/string-pool.ts";
import { createNamespace, deleteNamespace, waitFor } from "./support/fixture.ts";

/**
 * The informer against the real apiserver through a proxy that can answer a watch with 410 Gone, hold a watch open
 * in silence, fail requests, or cut connections: the cache must come back right every time.
 */
const kubeconfig = inject("kubeconfig");
let namespace: string;
let proxy: http.Server;
let proxyUrl: string;
let admin: KubeClient;
type Fault = "gone" | "stall" | "fail";
const faults: Fault[] = [];
const watchRequests: number[] = [];
const open = new Set<http.ServerResponse>();

async function startProxy(kc: KubeConfig): Promise<void> {
  const target = new URL(kc.getCurrentCluster()!.server);
  const opts: https.RequestOptions = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  const agent = new https.Agent({ ca: opts.ca, cert: opts.cert, key: opts.key, keepAlive: true });
  proxy = http.createServer((req, res) => {
    const isWatch = /[?&]watch=true/.test(req.url ?? "");
    if (isWatch) watchRequests.push(Date.now());
    const fault = isWatch || faults[0] === "fail" ? faults.shift() : undefined;
    if (fault === "fail") {
      res
        .writeHead(503, { "Content-Type": "application/json" })
        .end('{"kind":"Status","code":503,"reason":"ServiceUnavailable"}');
      return;
    }
    if (fault === "gone") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(
        JSON.stringify({
          type: "ERROR",
          object: {
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            code: 410,
            reason: "Expired",
            message: "too old resource version",
          },
        }) + "\n",
      );
      return;
    }
    if (fault === "stall") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.flushHeaders();
      open.add(res);
      res.on("close", () => open.delete(res));
      return;
    }
    const upstream = https.request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: target.host, ...(opts.headers as Record<string, string>) },
        agent,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        if (isWatch) {
          open.add(res);
          res.on("close", () => open.delete(res));
        }
        up.pipe(res);
        res.on("close", () => up.destroy());
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

/** Ends every watch going through the proxy (as a load balancer dropping connections would). */
function cutWatches(): void {
  for (const res of open) res.destroy();
}

function informerThroughProxy(): Informer<KubeObject> {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "proxy", server: proxyUrl, skipTLSVerify: true }],
    users: [{ name: "proxy" }],
    contexts: [{ name: "proxy", cluster: "proxy", user: "proxy" }],
    currentContext: "proxy",
  });
  return new Informer<KubeObject>({
    client: new KubeClient(kc),
    path: `/api/v1/namespaces/${namespace}/configmaps`,
    log: silentLogger(),
    stallTimeoutMs: 1500,
    watchTimeoutSeconds: 60,
    backoff: { initialMs: 100, maxMs: 2000 },
  });
}

const createConfigMap = (name: string) =>
  admin.create(`/api/v1/namespaces/${namespace}/configmaps`, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name },
    data: { a: "b" },
  });

beforeAll(async () => {
  namespace = await createNamespace(kubeconfig, "informer");
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  admin = new KubeClient(kc);
  await startProxy(kc);
});

afterAll(async () => {
  cutWatches();
  proxy?.close();
  admin?.close();
  if (namespace) await deleteNamespace(kubeconfig, namespace);
});

describe("informer", () => {
  it("relists on 410 Gone and reports what changed meanwhile", async () => {
    const informer = informerThroughProxy();
    const added: string[] = [];
    informer.on((event, o) => event === "add" && added.push(o.metadata!.name!));
    await createConfigMap("before");
    await informer.start();
    expect(informer.get(namespace, "before")).toBeDefined();
    expect(informer.relists).toBe(1);

    faults.push("gone");
    await createConfigMap("during-outage");
    cutWatches();
    await waitFor("relisted", async () => informer.relists === 2, 10_000, 50);
    await waitFor(
      "object created meanwhile in the cache",
      async () => informer.get(namespace, "during-outage"),
      10_000,
      50,
    );
    await createConfigMap("after");
    await waitFor("watch works again", async () => informer.get(namespace, "after"), 10_000, 50);
    expect(added).toEqual(expect.arrayContaining(["before", "during-outage", "after"]));
    await informer.stop();
  });

  it("notices a watch that went silent, restarts it, and misses nothing", async () => {
    const informer = informerThroughProxy();
    await informer.start();
    faults.push("stall");
    cutWatches();
    await createConfigMap("while-stalled");
    await waitFor("stall noticed", async () => informer.stalls === 1, 10_000, 50);
    await waitFor("object from the stalled period", async () => informer.get(namespace, "while-stalled"), 10_000, 50);
    await informer.stop();
  });

  it("reconnects with growing backoff while the apiserver fails, then catches up", async () => {
    const informer = informerThroughProxy();
    await informer.start();
    watchRequests.length = 0;
    faults.push("fail", "fail", "fail", "fail");
    cutWatches();
    await createConfigMap("after-errors");
    await waitFor("caught up", async () => informer.get(namespace, "after-errors"), 20_000, 50);
    const gaps = watchRequests.slice(1).map((t, i) => t - watchRequests[i]!);
    expect(watchRequests.length).toBeGreaterThanOrEqual(5);
    expect(gaps[2]!).toBeGreaterThan(gaps[0]!); // 100 ms, 200 ms, 400 ms (±20 %)
    await informer.stop();
  });

  it("keeps only what its transform leaves, for listed, watched and upserted objects alike", async () => {
    const informer = new Informer<KubeObject>({
      client: admin,
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      log: silentLogger(),
      transform: (o) => {
        const trimmed = withoutManagedFields(o);
        return { ...trimmed, data: { kept: String(Object.keys((o.data as object | undefined) ?? {}).length) } };
      },
    });
    const handed: KubeObject[] = [];
    informer.on((_event, o) => handed.push(o));
    const listed = (await createConfigMap("transform-listed")) as KubeObject;
    expect(listed.metadata?.managedFields).toBeDefined(); // what the apiserver answers carries them
    await informer.start();
    await createConfigMap("transform-watched");
    await waitFor("watched object in the cache", async () => informer.get(namespace, "transform-watched"), 10_000, 50);
    const upserted = await admin.mergePatch<KubeObject>(`/api/v1/namespaces/${namespace}/configmaps/transform-listed`, {
      data: { c: "d" },
    });
    informer.upsert(upserted);
    for (const name of ["transform-listed", "transform-watched"]) {
      const cached = informer.get(namespace, name)!;
      expect(cached.metadata?.managedFields).toBeUndefined();
      expect(cached.metadata?.resourceVersion).toBeDefined();
    }
    expect(informer.get(namespace, "transform-listed")!.data).toEqual({ kept: "2" });
    expect(handed.length).toBeGreaterThan(0);
    expect(handed.every((o) => o.metadata?.managedFields === undefined)).toBe(true);
    await informer.stop();
  });

  it("indexes objects by a key they share, one or many, as they come and go, with keys from a pool", async () => {
    const pool = new StringPool();
    const informer = new Informer<KubeObject>({
      client: admin,
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      labelSelector: "group",
      log: silentLogger(),
      indexKeys: (o) => [cacheKey(o.metadata!.namespace!, o.metadata!.labels!.group!)],
      keys: pool.intern,
    });
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const create = (name: string, group: string) =>
      admin.create(path, { apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels: { group } } });
    const members = (group: string) =>
      informer
        .byIndex(cacheKey(namespace, group))
        .map((o) => o.metadata!.name!)
        .sort();
    await create("index-a1", "a");
    await create("index-b1", "b");
    await informer.start();
    expect(members("a")).toEqual(["index-a1"]);
    await create("index-a2", "a");
    await create("index-a3", "a");
    await waitFor("three in group a", async () => members("a").length === 3, 10_000, 50);
    expect(members("a")).toEqual(["index-a1", "index-a2", "index-a3"]);
    // One moves to group b; then the others go: the index follows each change.
    await admin.mergePatch(`${path}/index-a2`, { metadata: { labels: { group: "b" } } });
    await waitFor("index-a2 in group b", async () => members("b").length === 2, 10_000, 50);
    expect(members("a")).toEqual(["index-a1", "index-a3"]);
    await admin.delete(`${path}/index-a1`);
    await waitFor("index-a1 gone", async () => members("a").length === 1, 10_000, 50);
    expect(members("a")).toEqual(["index-a3"]);
    await admin.delete(`${path}/index-a3`);
    await waitFor("group a empty", async () => members("a").length === 0, 10_000, 50);
    expect(members("b")).toEqual(["index-a2", "index-b1"]);
    await informer.stop();
  });
});
