import { existsSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens } from "../../support/dev-server.ts";
import { freePort } from "../../support/ports.ts";
import { cli, emptyHome } from "./support.ts";

// Where the commands find the API and its token: --url/--token, KUBECREW_URL/KUBECREW_TOKEN, or what `kubecrew login`
// saved (checked against the API first, a file only its owner can read); and how a refusal or an absent API reads.
describe("kubecrew login, logout and the API's address", { timeout: 60_000 }, () => {
  let dev: RunningDev;

  beforeAll(async () => {
    dev = await startTestDev();
  });
  afterAll(() => dev?.stop());

  it("login checks the token, saves a 0600 file that later commands use; logout removes it", async () => {
    const home = emptyHome();
    const config = join(home, "config");
    const env = { HOME: home, XDG_CONFIG_HOME: config };
    const file = join(config, "kubecrew", "config.json");

    const login = await cli(["login", "--url", `${dev.url}/`, "--token-stdin"], env, `${tokens.org}\n`);
    expect(login.stderr).toBe("");
    expect(login.code).toBe(0);
    expect(login.stdout).toBe(`Logged in to ${dev.url} (crews: research); saved to ${file}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ url: dev.url, token: tokens.org });

    const run = await cli(["run", "research", "-i", "topic=tides"], env);
    expect(run.code).toBe(0);
    const id = run.stdout.trim();
    const list = await cli(["list"], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(id);

    // The saved token is for the saved URL only: never sent to another server.
    const elsewhere = await cli(["list", "--url", "http://127.0.0.1:9"], env);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toBe(
      "kubecrew list: no token for http://127.0.0.1:9: pass --token, set KUBECREW_TOKEN, or run kubecrew login " +
        "--url http://127.0.0.1:9 --token TOKEN\n",
    );

    const logout = await cli(["logout"], env);
    expect(logout).toMatchObject({ code: 0, stdout: `Logged out of ${dev.url}; removed ${file}\n` });
    expect(existsSync(file)).toBe(false);
    const after = await cli(["list"], env);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(
      /^kubecrew list: no crew API given: pass --url, set KUBECREW_URL, or run kubecrew login/,
    );
  });

  it("a refused token: one line, exit 1, and login saves nothing", async () => {
    const home = emptyHome();
    const env = { HOME: home };
    const refused = `kubecrew list: the token was refused by ${dev.url} (401)`;
    for (const args of [
      ["list", "--url", dev.url, "--token", "kco_not-a-token-00000000000000000000"],
      ["run", "research", "-i", "topic=tides", "--watch", "--url", dev.url, "--token", "kco_wrong"],
    ]) {
      const run = await cli(args, env);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr.split("\n")).toHaveLength(2); // one line and its newline
      expect(run.stderr.replace(/^kubecrew \w+/, "kubecrew list")).toMatch(new RegExp(`^${escape(refused)}: `));
    }
    // A token for another crew only is refused by the crew's routes as well.
    const other = await cli(["status", "00000000-0000-4000-8000-000000000000", "--crew", "research"], {
      ...env,
      KUBECREW_URL: dev.url,
      KUBECREW_TOKEN: tokens.other,
    });
    expect(other.stderr).toMatch(/^kubecrew status: the token was refused by /);

    const login = await cli(["login", "--url", dev.url, "--token", "kco_wrong"], env);
    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/^kubecrew login: the token was refused by .*\n$/);
    expect(existsSync(join(home, ".config", "kubecrew", "config.json"))).toBe(false);
  });

  it("an API that is not there, or does not speak the API: one line naming the URL", async () => {
    const port = await freePort();
    const absent = await cli(["list", "--url", `http://127.0.0.1:${port}`, "--token", tokens.org], {});
    expect(absent).toMatchObject({ code: 1, stdout: "" });
    expect(absent.stderr).toBe(`kubecrew list: cannot reach http://127.0.0.1:${port}: connection refused\n`);

    const other: Server = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<p>"));
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
    try {
      const wrong = await cli(["list"], { KUBECREW_URL: url, KUBECREW_TOKEN: tokens.org });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toBe(
        `kubecrew list: unexpected answer from ${url}/crews: (body): Invalid input: expected object, received undefined\n`,
      );
    } finally {
      other.close();
    }

    const badUrl = await cli(["list"], { KUBECREW_URL: "ftp://example.invalid", KUBECREW_TOKEN: tokens.org });
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toBe(
      "kubecrew list: Invalid configuration: KUBECREW_URL: must be an http:// or https:// URL without credentials, " +
        "query or fragment\n",
    );
  });
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
