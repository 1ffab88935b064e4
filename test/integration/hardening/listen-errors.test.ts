import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { occupyPort, runKubecrew } from "../../support/occupied-port.ts";
import { integrationsEnv, uniquePrefix } from "../integrations/harness.ts";

/**
 * Issue 12 item 9: a port something else listens on ends `kubecrew <command>` with one line naming the variable that
 * sets the port, and exit status 1 (a 17-line EADDRINUSE stack before). The port is occupied by a real listener.
 * `kubecrew api` syncs its informers before it listens, so its case is in test/cluster/api-command.test.ts.
 */
describe("a port already in use", () => {
  let occupied: Awaited<ReturnType<typeof occupyPort>>;
  beforeAll(async () => {
    occupied = await occupyPort();
  });
  afterAll(async () => {
    await occupied?.release();
  });

  const expectOneLine = (run: { code: number | null; stdout: string; stderr: string }, line: string) => {
    expect(run.stderr).toBe(`${line}\n`);
    expect(run.code).toBe(1);
  };

  it("kubecrew dev: one line naming PORT, exit 1", async () => {
    const run = await runKubecrew("dev", { HOST: "127.0.0.1", PORT: String(occupied.port) });
    expectOneLine(run, `kubecrew dev: port ${occupied.port} is in use (PORT)`);
    expect(run.stdout).toBe("");
  });

  it("kubecrew integrations: one line naming KUBECREW_INTEGRATIONS_PORT, or PORT when that set it", async () => {
    const env = integrationsEnv({
      issuer: "http://127.0.0.1:9",
      publicUrl: "https://app.example.com/oauthsvc",
      redisUrl: inject("redisUrl"),
      port: occupied.port,
      prefix: uniquePrefix("port-in-use"),
    });
    expectOneLine(
      await runKubecrew("integrations", env),
      `kubecrew integrations: port ${occupied.port} is in use (KUBECREW_INTEGRATIONS_PORT)`,
    );
    const { KUBECREW_INTEGRATIONS_PORT: _, ...withoutIntegrationsPort } = env;
    expectOneLine(
      await runKubecrew("integrations", { ...withoutIntegrationsPort, PORT: String(occupied.port) }),
      `kubecrew integrations: port ${occupied.port} is in use (PORT)`,
    );
  });

  it("kubecrew controller: one line naming KUBECREW_HEALTH_PORT (health and metrics), exit 1", async () => {
    // The health port is bound before the controller talks to the cluster: a kubeconfig naming an address nothing
    // listens on is enough to reach it.
    const dir = mkdtempSync(join(tmpdir(), "kubecrew-port-"));
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:9' } }]",
        "users: [{ name: u, user: { token: t } }]",
        "contexts: [{ name: c, context: { cluster: c, user: u } }]",
        "current-context: c",
      ].join("\n"),
    );
    const run = await runKubecrew("controller", {
      KUBECONFIG: kubeconfig,
      KUBECREW_HEALTH_HOST: "127.0.0.1",
      KUBECREW_HEALTH_PORT: String(occupied.port),
      KUBECREW_LEADER_ELECT: "false",
      LOG_LEVEL: "warn",
    });
    expectOneLine(run, `kubecrew controller: port ${occupied.port} is in use (KUBECREW_HEALTH_PORT)`);
  });
});

/**
 * Issue 28 item 5: every other listen error was a stack trace (`HOST=10.255.255.1 npm start`: EADDRNOTAVAIL). Now
 * one line naming the address and the variable to change, exit status 1. 10.255.255.1 and 2001:db8::1 are addresses
 * no interface of the test machine has; nothing is sent to them (bind fails locally). The other causes (a name that
 * does not resolve, a privileged port) are in platform/http/listen-error.test.ts: they would need DNS or another user.
 */
describe("an address the server cannot listen on", () => {
  const absent = "10.255.255.1";
  const expectOneLine = (run: { code: number | null; stdout: string; stderr: string }, line: string) => {
    expect(run.stderr).toBe(`${line}\n`);
    expect(run.code).toBe(1);
  };

  it("kubecrew dev (npm start): an address this machine does not have names it and HOST", async () => {
    const run = await runKubecrew("dev", { HOST: absent, PORT: "8080" });
    expectOneLine(
      run,
      `kubecrew dev: cannot listen on ${absent}:8080: no network interface of this machine has the address ` +
        `${absent} (HOST)`,
    );
    expect(run.stdout).toBe("");
  });

  it("kubecrew dev: an IPv6 address in brackets", async () => {
    expectOneLine(
      await runKubecrew("dev", { HOST: "2001:db8::1", PORT: "8080" }),
      "kubecrew dev: cannot listen on [2001:db8::1]:8080: no network interface of this machine has the address " +
        "2001:db8::1 (HOST)",
    );
  });

  it("kubecrew integrations names KUBECREW_INTEGRATIONS_HOST", async () => {
    const env = integrationsEnv({
      issuer: "http://127.0.0.1:9",
      publicUrl: "https://app.example.com/oauthsvc",
      redisUrl: inject("redisUrl"),
      port: 8787,
      prefix: uniquePrefix("listen-error"),
    });
    expectOneLine(
      await runKubecrew("integrations", { ...env, KUBECREW_INTEGRATIONS_HOST: absent }),
      `kubecrew integrations: cannot listen on ${absent}:8787: no network interface of this machine has the ` +
        `address ${absent} (KUBECREW_INTEGRATIONS_HOST)`,
    );
  });

  it("kubecrew controller names KUBECREW_HEALTH_HOST", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kubecrew-listen-"));
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:9' } }]",
        "users: [{ name: u, user: { token: t } }]",
        "contexts: [{ name: c, context: { cluster: c, user: u } }]",
        "current-context: c",
      ].join("\n"),
    );
    expectOneLine(
      await runKubecrew("controller", {
        KUBECONFIG: kubeconfig,
        KUBECREW_HEALTH_HOST: absent,
        KUBECREW_HEALTH_PORT: "8081",
        KUBECREW_LEADER_ELECT: "false",
        LOG_LEVEL: "warn",
      }),
      `kubecrew controller: cannot listen on ${absent}:8081: no network interface of this machine has the address ` +
        `${absent} (KUBECREW_HEALTH_HOST)`,
    );
  });
});
