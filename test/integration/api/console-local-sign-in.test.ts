import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../../core/logger.ts";
import { devConfigSchema } from "../../../dev/config.ts";
import { startDev, type RunningDev } from "../../../dev/start.ts";

// Issue 28 item 2: `kubecrew dev` signed the local user (an org admin) in for any request to GET /console/session,
// whatever its Host header: a page on any site could reach the port through DNS rebinding, take the session and its
// CSRF token and create an org token at POST /admin/tokens. Now the automatic sign-in is for a loopback client naming
// the server by a loopback Host only, and bound to a non-loopback address the console asks for the admin key.

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** A raw request from 127.0.0.1 (fetch cannot set Host). */
function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      { method, headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) } },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : {} }),
        );
      },
    );
    req.on("error", reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

const cookieOf = (answer: Answer) =>
  ((answer.headers["set-cookie"] as string[] | undefined) ?? []).map((c) => c.split(";")[0]).join("; ");

describe("kubecrew dev bound to 127.0.0.1 (npm start)", () => {
  let dev: RunningDev;
  let port: string;
  beforeAll(async () => {
    dev = await startDev(devConfigSchema.parse({ PORT: "0", HOST: "127.0.0.1" }), silentLogger());
    port = new URL(dev.url).port;
  });
  afterAll(() => dev?.stop());

  const session = (host: string) => send(dev.url, "GET", "/console/session", { host });
  const tokenCount = async () => {
    const local = await session(`127.0.0.1:${port}`);
    const list = await send(dev.url, "GET", "/admin/tokens", { host: `127.0.0.1:${port}`, cookie: cookieOf(local) });
    expect(list.status).toBe(200);
    return (list.body.tokens as unknown[]).length;
  };

  it.each(["127.0.0.1:PORT", "localhost:PORT", "console.localhost:PORT", "[::1]:PORT", "127.8.9.10:PORT"])(
    "signs the local user in for Host %s from a loopback client",
    async (host) => {
      const answer = await session(host.replace("PORT", port));
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ signed_in: true, user: { subject: "local", admin: true } });
      expect(answer.body.csrf).toEqual(expect.any(String));
      expect(cookieOf(answer)).toMatch(/^kubecrew_console=/);
    },
  );

  it("refuses a DNS-rebinding Host with a clear 403: no session, no CSRF token", async () => {
    for (const host of [`rebind.attacker.example:${port}`, "rebind.attacker.example", `localhost.attacker.example`]) {
      const answer = await session(host);
      expect(answer.status, host).toBe(403);
      expect(answer.body).toEqual({
        error: "Forbidden",
        message:
          "The local user is signed in only at a loopback address (localhost, 127.0.0.1 or [::1]); " +
          "open the console at http://localhost:<port>/console/",
      });
      expect(answer.headers["set-cookie"]).toBeUndefined();
    }
  });

  it("the issue's chain (session, CSRF token, POST /admin/tokens) creates no org token", async () => {
    const before = await tokenCount();
    const host = `rebind.attacker.example:${port}`;
    const stolen = await session(host);
    const created = await send(
      dev.url,
      "POST",
      "/admin/tokens",
      { host, cookie: cookieOf(stolen), "x-csrf-token": String(stolen.body.csrf ?? "") },
      { kind: "org", crews: "*" },
    );
    expect(created.status).not.toBe(201);
    expect(created.body.token).toBeUndefined();
    expect(await tokenCount()).toBe(before);
  });
});

describe("kubecrew dev bound to every address (HOST=0.0.0.0, as in a container)", () => {
  let dev: RunningDev;
  beforeAll(async () => {
    dev = await startDev(devConfigSchema.parse({ PORT: "0", HOST: "0.0.0.0" }), silentLogger());
  });
  afterAll(() => dev?.stop());

  it("signs nobody in automatically, even from this machine, and asks for the admin key it generated", async () => {
    const host = new URL(dev.url).host;
    const answer = await send(dev.url, "GET", "/console/session", { host });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ signed_in: false, sign_in: { admin_key: true, oidc: false } });
    expect(answer.headers["set-cookie"]).toBeUndefined();

    const key = dev.consoleSignIn.generatedAdminKey!;
    expect(dev.consoleSignIn.how).toBe("admin-key");
    expect(key.length).toBeGreaterThanOrEqual(32);
    const wrong = await send(dev.url, "POST", "/console/sign-in", { host }, { admin_key: "x".repeat(43) });
    expect(wrong.status).toBe(401);
    const right = await send(dev.url, "POST", "/console/sign-in", { host }, { admin_key: key });
    expect(right.status).toBe(200);
    expect(right.body).toMatchObject({ signed_in: true, user: { subject: "admin", admin: true } });
    // The admin API takes the same key.
    expect((await send(dev.url, "GET", "/admin/tokens", { host, "x-admin-key": key })).status).toBe(200);
  });

  it("keeps a configured KUBECREW_ADMIN_KEY instead of generating one", async () => {
    const adminKey = "configured-admin-key-0123456789abcdef";
    const other = await startDev(
      devConfigSchema.parse({ PORT: "0", HOST: "0.0.0.0", KUBECREW_ADMIN_KEY: adminKey }),
      silentLogger(),
    );
    try {
      expect(other.consoleSignIn).toEqual({ how: "admin-key" });
      const host = new URL(other.url).host;
      const right = await send(other.url, "POST", "/console/sign-in", { host }, { admin_key: adminKey });
      expect(right.status).toBe(200);
    } finally {
      await other.stop();
    }
  });
});
