import { tmpdir } from "node:os";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RunningDev } from "../../dev/start.ts";
import type { ConsoleIdentity } from "../../console/session.ts";
import { appsSigningKey } from "../integration/integrations/apps-harness.ts";
import {
  internalApiKey,
  startProviderAndService,
  type ProviderAndService,
} from "../integration/integrations/harness.ts";
import { launchChromium, tabThroughControls } from "../support/browser.ts";
import { consoleSessionCookie } from "../support/console-session.ts";
import { startTestDev } from "../support/dev-server.ts";
import { freePort } from "../support/ports.ts";

const SCREENSHOTS = process.env.KUBECREW_SCREENSHOT_DIR ?? join(tmpdir(), "kubecrew-console-screenshots");
const SECRET = "console-apps-test-session-secret-0123456789";

let integrations: ProviderAndService;
let dev: RunningDev;
let browser: Browser;
let context: BrowserContext;
let page: Page;
beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const port = await freePort();
  // The real integrations service (redis-server, oidc-provider standing in for Google) behind kubecrew dev's
  // /connections; it sends the browser back to the console when the connection is made.
  integrations = await startProviderAndService({
    redisUrl: inject("redisUrl"),
    prefix: `test:console-apps:${Date.now()}:`,
    extra: { KUBECREW_OAUTH_ALLOWED_RETURN_HOSTS: `127.0.0.1:${port}`, KUBECREW_APPS_SIGNING_KEY: appsSigningKey },
  });
  [dev, browser] = await Promise.all([
    startTestDev(
      {},
      {
        env: {
          PORT: String(port),
          KUBECREW_APPS_URL: `${integrations.service.url}/v1/mcp`,
          KUBECREW_APPS_SIGNING_KEY: appsSigningKey,
          KUBECREW_OAUTH_INTERNAL_API_KEY: internalApiKey,
          KUBECREW_CONSOLE_SESSION_SECRET: SECRET,
        },
      },
    ),
    launchChromium(),
  ]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await dev?.stop();
  await integrations?.stop();
});

async function signedInAs(subject: string, identity?: ConsoleIdentity): Promise<void> {
  await context?.close();
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const { cookie } = consoleSessionCookie(SECRET, identity ?? { kind: "user", crews: "*", subject, admin: false });
  const [name, value] = cookie.split("=") as [string, string];
  await context.addCookies([{ name, value, url: dev.url }]);
  page = await context.newPage();
}
const statusOf = (app: string) => page.locator(`tr[data-app="${app}"] .connection-status`).textContent();

describe("the Apps tab", () => {
  it("connects Gmail through the integrations service's sign-in and lists it for that user only", async () => {
    await signedInAs("alice");
    integrations.provider.account = { sub: "sub-alice", email: "alice@example.com" };
    await page.goto(`${dev.url}/console/#/crews/research/apps`);
    await expect.poll(() => statusOf("gmail")).toBe("not connected");
    await page.getByRole("button", { name: "Connect gmail" }).click();
    // Out to the integrations service and the provider, and back to this tab.
    await page.waitForURL((url) => url.searchParams.get("status") === "connected", { timeout: 20_000 });
    await expect.poll(() => statusOf("gmail"), { timeout: 10_000 }).toBe("connected");
    expect(await page.locator('tr[data-app="gmail"]').textContent()).toContain("alice@example.com");
    await page.screenshot({ path: join(SCREENSHOTS, "apps.png"), fullPage: true });

    // Another user's console does not see it, in the page or at the JSON endpoint.
    await signedInAs("bob");
    await page.goto(`${dev.url}/console/#/crews/research/apps`);
    await expect.poll(() => statusOf("gmail")).toBe("not connected");
    const bobs = (await (await page.request.get(`${dev.url}/connections`)).json()) as {
      connections: { app: string; connected: boolean }[];
    };
    expect(bobs.connections.find((c) => c.app === "gmail")?.connected).toBe(false);

    // Disconnect: a state-changing request, so it needs the session's CSRF token.
    await signedInAs("alice");
    expect((await page.request.delete(`${dev.url}/connections/gmail`)).status()).toBe(403);
    await page.goto(`${dev.url}/console/#/crews/research/apps`);
    await expect.poll(() => statusOf("gmail")).toBe("connected");
    await page.getByRole("button", { name: "Disconnect gmail" }).click();
    await expect.poll(() => statusOf("gmail")).toBe("not connected");
    // Every Connect button is reachable from the keyboard.
    const { controls, unreached } = await tabThroughControls(page);
    expect(controls.filter((c) => c.startsWith('button "Connect'))).toHaveLength(13);
    expect(unreached).toEqual([]);
  });

  it("shows an org admin signed in as a person their own apps; the admin key's session has none", async () => {
    const admin = { kind: "org", crews: "*", subject: "dana@example.com", admin: true } as const;
    await signedInAs("dana", { ...admin, user: "dana@example.com" });
    await page.goto(`${dev.url}/console/#/crews/research/apps`);
    await expect.poll(() => statusOf("gmail")).toBe("not connected");
    const dana = await page.request.get(`${dev.url}/connections`);
    expect(dana.status()).toBe(200);
    expect(((await dana.json()) as { connections: unknown[] }).connections).toHaveLength(13);

    await signedInAs("admin", { ...admin, subject: "admin" });
    const keyHolder = await page.request.get(`${dev.url}/connections`);
    expect(keyHolder.status()).toBe(403);
    expect(await keyHolder.json()).toMatchObject({ error: "Forbidden" });
  });
});
