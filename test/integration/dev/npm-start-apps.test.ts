import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { MemoryTokenStore } from "../../../api/auth/memory-token-store.ts";
import { createLogger } from "../../../core/logger.ts";
import { devConfigSchema } from "../../../dev/config.ts";
import { startDev, type RunningDev } from "../../../dev/start.ts";
import { MemoryStore } from "../../../integrations/memory-store.ts";
import { RedisStore } from "../../../integrations/redis-store.ts";
import { startLlmFixture, quoteToolResults, toolCalls, type LlmFixture } from "../../support/llm-fixture.ts";
import type { OidcTestProvider } from "../../support/oidc-provider.ts";
import { freePort } from "../../support/ports.ts";
import { startGoogleFixture, type GoogleFixture } from "../../support/provider-fixtures/google.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { appChains, chainCrewName, chainCrewYaml, toolOf } from "../integrations/app-chains.ts";
import { clients, dumpRedis, startProvider, TestBrowser, uniquePrefix } from "../integrations/harness.ts";

// Issue 28 item 9: `npm start` with connected apps. kubecrew dev runs the integrations service in its own process at
// /oauthsvc, its connections in memory (sealed as in Redis) when there is no Redis, its secrets generated: a provider's
// client id and secret are all it takes. Here that provider is oidc-provider standing in for Google (the issuer is the
// one more variable a test needs), Gmail's API is its fixture, and the model the LLM fixture. The user opens the
// console, connects Gmail through the real OAuth flow, runs a crew whose agent sends mail, and Gmail receives the call
// with the token Google issued. Before this, GET /connections answered 404 "Connections not configured".
const gmail = appChains.find((chain) => chain.app === "gmail")!;
let port: number;
/** The second server's, with KUBECREW_REDIS_URL. */
let redisPort: number;
let provider: OidcTestProvider;
let google: GoogleFixture;
let llm: LlmFixture;
let dev: RunningDev;

beforeAll(async () => {
  [port, redisPort] = [await freePort(), await freePort()];
  [provider, google, llm] = await Promise.all([
    startProvider([`http://127.0.0.1:${port}/oauthsvc`, `http://127.0.0.1:${redisPort}/oauthsvc`]),
    startGoogleFixture(),
    startLlmFixture(),
  ]);
  provider.account = { sub: "sub-local", email: "me@example.com" };
  dev = await startTestDev(
    { [`${chainCrewName(gmail)}.yaml`]: chainCrewYaml(gmail, llm.baseURL) },
    {
      env: {
        PORT: String(port),
        KUBECREW_GOOGLE_CLIENT_ID: clients.google.client_id,
        KUBECREW_GOOGLE_CLIENT_SECRET: clients.google.client_secret,
        KUBECREW_GOOGLE_ISSUER_URL: provider.issuer,
        KUBECREW_GOOGLE_API_BASE_URL: google.url,
      },
    },
  );
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  await Promise.all([provider?.stop(), google?.stop(), llm?.stop()]);
});

/** The console's session, as the browser holds it after opening /console/ (the local user, signed in). */
async function consoleSession() {
  const res = await fetch(`${dev.url}/console/session`);
  expect(res.status).toBe(200);
  const { csrf } = (await res.json()) as { csrf: string };
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  return { cookie, csrf };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;
async function asConsole(path: string, init: { method?: string; body?: unknown } = {}) {
  const { cookie, csrf } = await consoleSession();
  const res = await fetch(`${dev.url}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: {
      cookie,
      "x-csrf-token": csrf,
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: res.status, body: (await res.json()) as Loose };
}
const gmailOf = (body: Loose) => (body.connections as { app: string }[]).find((c) => c.app === "gmail") as Loose;

describe("npm start with connected apps (no Redis, only Google's client id and secret)", () => {
  let accessToken: string;

  it("lists the apps in the console's Apps tab, Gmail not connected yet", async () => {
    const listed = await asConsole("/connections");
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(gmailOf(listed.body)).toEqual({
      app: "gmail",
      connected: false,
      status: "not_connected",
      account: null,
      scopes: [],
    });
    expect(dev.integrations).toMatchObject({
      publicUrl: `http://127.0.0.1:${port}/oauthsvc`,
      providers: ["google"],
      redirectUri: `http://127.0.0.1:${port}/oauthsvc/v1/auth/<provider>/callback`,
    });
    // Its health names the store it has: memory, and no Redis to call reachable.
    const health = await fetch(`http://127.0.0.1:${port}/oauthsvc/health`);
    expect(await health.json()).toEqual({ status: "ok", store: "memory" });
  });

  it("connects Gmail through the provider's sign-in and comes back to the console", async () => {
    const returnUrl = `${dev.url}/console/#/apps`;
    const link = await asConsole("/connections/gmail", { body: { returnUrl } });
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    expect(link.body.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/oauthsvc/v1/connect/`));

    const browser = new TestBrowser();
    const end = await browser.open(link.body.url as string, { stopAtPath: /^\/console\/$/ });
    // The provider's sign-in page came and went; the callback was the dev server's own /oauthsvc.
    expect(browser.visited.some((url) => url.startsWith(provider.issuer))).toBe(true);
    expect(browser.visited).toContainEqual(
      expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${port}/oauthsvc/v1/auth/google/callback\\?`)),
    );
    expect(end.location).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/console/\\?`));
    expect(new URL(end.location!).searchParams.get("status")).toBe("connected");
    accessToken = provider.issuedTokens()[0]!;

    const listed = await asConsole("/connections");
    expect(gmailOf(listed.body)).toMatchObject({
      connected: true,
      status: "connected",
      account: { email: "me@example.com" },
    });
    // Another user has connected nothing.
    const alice = await fetch(`${dev.url}/connections`, { headers: { authorization: `Bearer ${tokens.alice}` } });
    expect(gmailOf(await alice.json()).connected).toBe(false);
  });

  it("keeps the provider's tokens in memory only sealed: no access or refresh token in clear", () => {
    const store = dev.integrations!.store;
    expect(store).toBeInstanceOf(MemoryStore);
    const held = JSON.stringify((store as MemoryStore).snapshot());
    expect(held).toMatch(/sealedAccessToken\W+v1\./);
    expect(held).toMatch(/sealedRefreshToken\W+v1\./);
    const issued = provider.issuedTokens();
    expect(issued.length).toBeGreaterThanOrEqual(2);
    for (const token of issued) expect(held.includes(token), "a provider token in clear in memory").toBe(false);
  });

  it("runs a crew from the console whose agent sends mail: Gmail receives it with the stored token", async () => {
    const tool = toolOf(gmail);
    llm.enqueue(toolCalls({ name: tool, input: gmail.input }), quoteToolResults());
    const crew = chainCrewName(gmail);
    const kickoff = await asConsole(`/crews/${crew}/kickoff`, { body: { inputs: {} } });
    expect(kickoff.status, JSON.stringify(kickoff.body)).toBe(200);
    const id = kickoff.body.kickoff_id as string;
    const final = await waitFor(async () => {
      const s = (await asConsole(`/crews/${crew}/status/${id}`)).body;
      return s.status === "running" ? undefined : s;
    }, 45_000);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.tasks[0].tools_used).toEqual([tool]);
    expect(final.result.output).toMatch(gmail.answers);

    const sends = google.requests.filter((r) => r.operation === gmail.receives.operation);
    expect(sends).toHaveLength(1);
    expect(sends[0]!.token).toBe(accessToken);
    expect(gmail.receives.carrying(sends[0]!)).toEqual(gmail.receives.is);
    expect(google.violations).toEqual([]);
    for (const token of provider.issuedTokens()) expect(JSON.stringify(final).includes(token)).toBe(false);
  }, 60_000);
});

describe("kubecrew dev with KUBECREW_REDIS_URL", () => {
  const redisUrl = inject("redisUrl");
  const prefix = uniquePrefix("dev-apps");
  const logs: string[] = [];
  let withRedis: RunningDev;
  let config: ReturnType<typeof devConfigSchema.parse>;
  beforeAll(async () => {
    const store = new MemoryTokenStore();
    store.add(tokens.alice, { kind: "user", crews: "*", subject: "alice" });
    config = devConfigSchema.parse({
      PORT: String(redisPort),
      KUBECREW_REDIS_URL: redisUrl,
      KUBECREW_OAUTH_REDIS_KEY_PREFIX: prefix,
      KUBECREW_GOOGLE_CLIENT_ID: clients.google.client_id,
      KUBECREW_GOOGLE_CLIENT_SECRET: clients.google.client_secret,
      KUBECREW_GOOGLE_ISSUER_URL: provider.issuer,
    });
    const log = createLogger({ level: "debug" }, { write: (line: string) => void logs.push(line) });
    withRedis = await startDev(config, log, { tokens: store });
  });
  afterAll(() => withRedis?.stop());

  it("keeps the connections in Redis as `kubecrew integrations` does, sealed; prints none of the generated secrets", async () => {
    expect(withRedis.integrations!.store).toBeInstanceOf(RedisStore);
    const before = provider.issuedTokens().length;
    const res = await fetch(`${withRedis.url}/connections/gmail`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.alice}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(200);
    const end = await new TestBrowser().open(((await res.json()) as { url: string }).url, {
      stopAtPath: /^\/console\/$/,
    });
    expect(end.location).toBe(
      `http://127.0.0.1:${redisPort}/console/?status=connected&connection_id=${new URL(end.location!).searchParams.get("connection_id")}&provider=google&product=gmail`,
    );
    const issued = provider.issuedTokens().slice(before);
    expect(issued.length).toBeGreaterThanOrEqual(2);

    const held = [...(await dumpRedis(redisUrl, prefix)).entries()];
    expect(held.map(([key]) => key)).toContainEqual(expect.stringMatching(new RegExp(`^${prefix}connection:`)));
    const text = JSON.stringify(held);
    expect(text).toMatch(/sealedAccessToken\W+v1\./);
    for (const token of issued) expect(text.includes(token), "a provider token in clear in Redis").toBe(false);

    const settings = config.embeddedIntegrations!;
    const secrets = {
      cookie: settings.config.cookieSecret,
      encryption: settings.config.encryptionKey.toString("hex"),
      internal: settings.internalApiKey,
      signing: settings.appsSigningKey,
    };
    expect(new Set(Object.values(secrets)).size).toBe(4);
    const health = await fetch(`${withRedis.url}/oauthsvc/health`);
    expect(await health.json()).toEqual({ status: "ok", store: "redis", redis: "reachable" });
    const logged = logs.join("");
    expect(logged).toContain("Integrations service (connected apps) at /oauthsvc");
    expect(logged).toContain("KUBECREW_OAUTH_DB_ENCRYPTION_KEY is not set");
    for (const [name, value] of Object.entries(secrets)) expect(logged.includes(value), `${name} logged`).toBe(false);
    for (const token of issued) expect(logged.includes(token), "a provider token logged").toBe(false);
  });
});
