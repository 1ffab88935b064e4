import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type https from "node:https";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { dump } from "js-yaml";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { Kubeconfig, type KubeAccess } from "./kubeconfig.ts";

/**
 * kubecrew's processes load their kubeconfig with Kubeconfig (kube/runtime/kubeconfig.ts) instead of @kubernetes/client-node's
 * KubeConfig, to spare the ~80 MB its generated client costs. Each case here loads the same kubeconfig both ways and
 * checks the request options are the ones client-node gives, and the values users rely on.
 */

const dir = mkdtempSync(join(tmpdir(), "kubecrew-kubeconfig-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const savedEnv = { ...process.env };
afterEach(() => {
  process.env = { ...savedEnv };
  vi.useRealTimers();
});

let files = 0;
function kubeconfigFile(user: Record<string, unknown>, cluster: Record<string, unknown> = {}, name = "c"): string {
  const path = join(dir, `config-${++files}`);
  writeFileSync(
    path,
    dump({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: `${name}-cluster`, cluster: { server: "https://10.0.0.1:6443", ...cluster } }],
      users: [{ name: `${name}-user`, user }],
      contexts: [{ name, context: { cluster: `${name}-cluster`, user: `${name}-user` } }],
      "current-context": name,
    }),
  );
  return path;
}

async function optionsOf(access: KubeAccess): Promise<https.RequestOptions> {
  const options: https.RequestOptions = { headers: {} };
  await access.applyToHTTPSOptions(options);
  const { agent: _agent, ...rest } = options;
  return Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
}

function clientNode(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

const PEM = (what: string) => `-----BEGIN ${what}-----\nMIIB${what.replace(/ /g, "")}\n-----END ${what}-----\n`;
const b64 = (text: string) => Buffer.from(text).toString("base64");

/** The same options as client-node's KubeConfig for the kubeconfig at `path`; returns them. */
async function sameAsClientNode(path: string): Promise<https.RequestOptions> {
  const ours = Kubeconfig.fromFile(path);
  const theirs = clientNode(path);
  expect(ours.getCurrentCluster()?.server).toBe(theirs.getCurrentCluster()?.server);
  const options = await optionsOf(ours);
  expect(options).toEqual(await optionsOf(theirs));
  return options;
}

describe("Kubeconfig", () => {
  it("gives client certificate, key and CA from inline data, as client-node does", async () => {
    const path = kubeconfigFile(
      { "client-certificate-data": b64(PEM("CERTIFICATE")), "client-key-data": b64(PEM("PRIVATE KEY")) },
      { "certificate-authority-data": b64(PEM("CA")) },
    );
    const options = await sameAsClientNode(path);
    expect(String(options.cert)).toBe(PEM("CERTIFICATE"));
    expect(String(options.key)).toBe(PEM("PRIVATE KEY"));
    expect(String(options.ca)).toBe(PEM("CA"));
    expect(options.headers).toEqual({});
  });

  it("reads certificate, key and CA files relative to the kubeconfig's directory", async () => {
    const sub = join(dir, "relative");
    mkdirSync(join(sub, "pki"), { recursive: true });
    writeFileSync(join(sub, "pki", "client.crt"), PEM("CLIENT"));
    writeFileSync(join(sub, "pki", "client.key"), PEM("KEY"));
    writeFileSync(join(sub, "pki", "ca.crt"), PEM("AUTHORITY"));
    const path = join(sub, "config");
    writeFileSync(
      path,
      readFileSync(
        kubeconfigFile(
          { "client-certificate": "pki/client.crt", "client-key": "pki/client.key" },
          { "certificate-authority": "pki/ca.crt" },
        ),
      ),
    );
    const options = await sameAsClientNode(path);
    expect(String(options.cert)).toBe(PEM("CLIENT"));
    expect(String(options.key)).toBe(PEM("KEY"));
    expect(String(options.ca)).toBe(PEM("AUTHORITY"));
  });

  it("sends a bearer token; honours insecure-skip-tls-verify, tls-server-name and impersonation", async () => {
    const path = kubeconfigFile(
      { token: "sa-token-1", as: "system:serviceaccount:ns:robot" },
      { "insecure-skip-tls-verify": true, "tls-server-name": "kubernetes.default.svc" },
    );
    const options = await sameAsClientNode(path);
    expect(options.headers).toEqual({
      Authorization: "Bearer sa-token-1",
      "Impersonate-User": "system:serviceaccount:ns:robot",
    });
    expect(options.rejectUnauthorized).toBe(false);
    expect(options.servername).toBe("kubernetes.default.svc");
  });

  it("sends basic auth for username and password", async () => {
    const options = await sameAsClientNode(kubeconfigFile({ username: "admin", password: "s3cret" }));
    expect(options.auth).toBe("admin:s3cret");
  });

  it("runs an exec credential plugin and keeps its credential until it expires", async () => {
    const counter = join(dir, "exec-runs");
    writeFileSync(counter, "");
    const plugin = join(dir, "plugin.mjs");
    writeFileSync(
      plugin,
      `import { appendFileSync } from "node:fs";
appendFileSync(${JSON.stringify(counter)}, "x");
console.log(JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential",
  status: { token: "exec-" + process.env.PLUGIN_TENANT, expirationTimestamp: new Date(Date.now() + 3600e3).toISOString() } }));`,
    );
    const path = kubeconfigFile({
      exec: {
        apiVersion: "client.authentication.k8s.io/v1",
        command: process.execPath,
        args: [plugin],
        env: [{ name: "PLUGIN_TENANT", value: "blue" }],
      },
    });
    const options = await sameAsClientNode(path);
    expect(options.headers).toEqual({ Authorization: "Bearer exec-blue" });
    expect(readFileSync(counter, "utf8")).toBe("xx"); // once for each of the two loaders
    const ours = Kubeconfig.fromFile(path);
    await optionsOf(ours);
    await optionsOf(ours);
    expect(readFileSync(counter, "utf8")).toBe("xxx"); // cached until its expiry
  });

  it("re-reads a token file as it rotates (the in-cluster service-account token), a minute at most later", async () => {
    const root = join(dir, "pod");
    const sa = join(root, "var/run/secrets/kubernetes.io/serviceaccount");
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, "token"), "first-token");
    writeFileSync(join(sa, "ca.crt"), PEM("CLUSTER CA"));
    writeFileSync(join(sa, "namespace"), "crews");
    process.env.KUBERNETES_SERVICE_HOST = "fd00::1";
    process.env.KUBERNETES_SERVICE_PORT = "443";
    vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-01-01T00:00:00Z") });
    const ours = Kubeconfig.inCluster(root);
    const theirs = new KubeConfig();
    theirs.loadFromCluster(root);
    expect(ours.getCurrentCluster()?.server).toBe("https://[fd00::1]:443");
    expect(ours.getCurrentCluster()?.server).toBe(theirs.getCurrentCluster()?.server);
    const first = await optionsOf(ours);
    expect(first).toEqual(await optionsOf(theirs));
    expect(first.headers).toEqual({ Authorization: "Bearer first-token" });
    expect(String(first.ca)).toBe(PEM("CLUSTER CA"));

    writeFileSync(join(sa, "token"), "rotated-token");
    vi.setSystemTime(new Date("2026-01-01T00:00:30Z"));
    expect((await optionsOf(ours)).headers).toEqual({ Authorization: "Bearer first-token" });
    vi.setSystemTime(new Date("2026-01-01T00:01:01Z"));
    expect((await optionsOf(ours)).headers).toEqual({ Authorization: "Bearer rotated-token" });
    expect((await optionsOf(theirs)).headers).toEqual({ Authorization: "Bearer rotated-token" });
  });

  it("hands an OIDC user to client-node's KubeConfig", async () => {
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const idToken = `${part({ alg: "none" })}.${part({ exp: Math.floor(Date.now() / 1000) + 3600 })}.signature`;
    const path = kubeconfigFile({
      "auth-provider": { name: "oidc", config: { "id-token": idToken, "client-id": "kubectl" } },
    });
    const options = await sameAsClientNode(path);
    expect(options.headers).toEqual({ Authorization: `Bearer ${idToken}` });
  });

  it("refuses plain HTTP unless the cluster says insecure-skip-tls-verify, as client-node does", async () => {
    const plain = kubeconfigFile({ token: "t" }, { server: "http://127.0.0.1:8080" });
    await expect(optionsOf(Kubeconfig.fromFile(plain))).rejects.toThrow(/HTTP protocol is not allowed/);
    await expect(optionsOf(clientNode(plain))).rejects.toThrow(/HTTP protocol is not allowed/);
    const insecure = kubeconfigFile(
      { token: "t" },
      { server: "http://127.0.0.1:8080", "insecure-skip-tls-verify": true },
    );
    expect((await sameAsClientNode(insecure)).headers).toEqual({ Authorization: "Bearer t" });
  });

  it("merges the files of KUBECONFIG (the later file's current context wins) and rejects a name defined twice", async () => {
    const a = kubeconfigFile({ token: "token-a" }, {}, "a");
    const b = kubeconfigFile({ token: "token-b" }, { server: "https://10.0.0.2:6443" }, "b");
    process.env.KUBECONFIG = [a, b].join(delimiter);
    const ours = Kubeconfig.fromDefault();
    const theirs = new KubeConfig();
    theirs.loadFromDefault();
    expect(ours.getCurrentContext()).toBe("b");
    expect(ours.getCurrentCluster()?.server).toBe("https://10.0.0.2:6443");
    expect(await optionsOf(ours)).toEqual(await optionsOf(theirs));
    expect((await optionsOf(ours)).headers).toEqual({ Authorization: "Bearer token-b" });

    process.env.KUBECONFIG = [a, kubeconfigFile({ token: "other" }, {}, "a")].join(delimiter);
    expect(() => Kubeconfig.fromDefault()).toThrow("Duplicate cluster: a-cluster");
  });

  it("falls back to ~/.kube/config without KUBECONFIG", async () => {
    const home = join(dir, "home");
    mkdirSync(join(home, ".kube"), { recursive: true });
    writeFileSync(join(home, ".kube", "config"), readFileSync(kubeconfigFile({ token: "from-home" }, {}, "home")));
    delete process.env.KUBECONFIG;
    process.env.HOME = home;
    const ours = Kubeconfig.fromDefault();
    expect(ours.getCurrentContext()).toBe("home");
    expect((await optionsOf(ours)).headers).toEqual({ Authorization: "Bearer from-home" });
  });
});
