import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  appChains,
  prepareSignIn,
  providerApisEnv,
  startProviderApis,
  toolOf,
  type ProviderApis,
} from "./app-chains.ts";
import { appsClient, connectApp, credential } from "./apps-harness.ts";
import { capturingLogger, startProviderAndService, uniquePrefix, type ProviderAndService } from "./harness.ts";

/**
 * An access token that expired is refreshed once, however many tool calls need it at the same moment: per provider
 * family, CONCURRENT calls of one action through /v1/mcp with an expired stored token make exactly one refresh_token
 * grant at the provider's token endpoint (oidc-provider counts them), and every call reaches the provider's API with the
 * one new token. Twice in a row, so the refresh token the provider answered (rotated by Microsoft, kept by the others,
 * left out by Google) is the one used next time. The token endpoint behaves as each provider's does:
 *
 * | family     | token response                                  | refresh token on refresh | refreshes per expiry |
 * |------------|-------------------------------------------------|--------------------------|----------------------|
 * | Google     | expires_in 3600                                 | left out (kept stored)   | 1                    |
 * | Microsoft  | expires_in 3600                                 | rotated                  | 1                    |
 * | Salesforce | no expires_in (the registry assumes 3600 s)     | same                     | 1                    |
 * | HubSpot    | expires_in 1800                                 | same                     | 1                    |
 * | Notion     | no expires_in: the token does not expire        | —                        | 0                    |
 * | Notion     | (should Notion answer expires_in) expires_in 3600 | same                   | 1                    |
 *
 * The service's clock is moved ahead past the token's lifetime instead of waiting for it.
 */
interface RefreshCase {
  family: string;
  /** The access token lifetime the token endpoint answers as expires_in; undefined: no expires_in. */
  expiresIn: number | undefined;
  rotates: boolean;
  omitsRefreshToken: boolean;
  refreshesPerExpiry: 0 | 1;
  /** The test's name, from the columns above. */
  title: string;
}
const rows: Omit<RefreshCase, "title">[] = [
  { family: "Google", expiresIn: 3600, rotates: false, omitsRefreshToken: true, refreshesPerExpiry: 1 },
  { family: "Microsoft", expiresIn: 3600, rotates: true, omitsRefreshToken: false, refreshesPerExpiry: 1 },
  { family: "Salesforce", expiresIn: undefined, rotates: false, omitsRefreshToken: false, refreshesPerExpiry: 1 },
  { family: "HubSpot", expiresIn: 1800, rotates: false, omitsRefreshToken: false, refreshesPerExpiry: 1 },
  { family: "Notion", expiresIn: undefined, rotates: false, omitsRefreshToken: false, refreshesPerExpiry: 0 },
  { family: "Notion", expiresIn: 3600, rotates: false, omitsRefreshToken: false, refreshesPerExpiry: 1 },
];
const cases: RefreshCase[] = rows.map((c) => ({
  ...c,
  title:
    `${c.family} (${c.expiresIn === undefined ? "no expires_in" : `expires_in ${c.expiresIn}`}` +
    `${c.rotates ? ", rotating refresh tokens" : ""}): ${c.refreshesPerExpiry} refresh per expiry`,
}));

const CONCURRENT_CALLS = 6;
const HOUR = 3600_000;

describe("an expired access token under concurrent tool calls, per provider", () => {
  const redisUrl = inject("redisUrl");
  let apis: ProviderApis & { stop(): Promise<void> };
  let started: ProviderAndService;
  let service: string;
  const logs = capturingLogger();
  /** How far the service's clock runs ahead of the real one. */
  let aheadMs = 0;

  beforeAll(async () => {
    apis = await startProviderApis();
    started = await startProviderAndService({
      redisUrl,
      prefix: uniquePrefix("apps-refresh"),
      extra: providerApisEnv(apis),
      logger: logs.logger,
      now: () => new Date(Date.now() + aheadMs),
    });
    service = started.service.url;
  });
  afterAll(async () => {
    await started?.stop();
    await apis?.stop();
  });

  for (const c of cases) {
    it(c.title, async () => {
      const chain = appChains.find((each) => each.family === c.family)!;
      const oidc = started.provider;
      prepareSignIn(oidc, chain, apis);
      Object.assign(oidc, {
        accessTokenTtlSeconds: c.expiresIn ?? 3600,
        omitExpiresIn: c.expiresIn === undefined,
        rotateRefreshTokens: c.rotates,
        omitRefreshTokenOnRefresh: c.omitsRefreshToken,
      });
      const user = `user-${c.family.toLowerCase()}-${c.expiresIn ?? "none"}`;
      let { accessToken: current } = await connectApp(service, oidc, user, chain.provider, chain.product);
      chain.given?.(apis);
      const api = apis[chain.receives.api];

      for (const round of [1, 2]) {
        aheadMs += 2 * HOUR; // past any lifetime above (and the 60 s refresh-ahead window)
        const client = await appsClient(
          service,
          await credential(user, [chain.action], { expiresAt: new Date(Date.now() + aheadMs + HOUR) }),
        );
        const refreshesBefore = oidc.refreshCount();
        const since = api.requests.length;
        const results = (await Promise.all(
          Array.from({ length: CONCURRENT_CALLS }, () =>
            client.callTool({ name: toolOf(chain), arguments: chain.input }),
          ),
        )) as CallToolResult[];
        await client.close();
        expect(
          results.map((r) => (r.isError ? client.text(r) : "ok")),
          `round ${round}`,
        ).toEqual(Array(CONCURRENT_CALLS).fill("ok"));
        expect(oidc.refreshCount() - refreshesBefore, `refreshes in round ${round}`).toBe(c.refreshesPerExpiry);
        const calls = api.requests.slice(since).filter((r) => r.operation === chain.receives.operation);
        expect(calls).toHaveLength(CONCURRENT_CALLS);
        const used = [...new Set(calls.map((r) => r.token))];
        expect(used, `tokens at the provider in round ${round}`).toHaveLength(1);
        if (c.refreshesPerExpiry === 1) {
          expect(used[0]).not.toBe(current);
          expect(oidc.issuedTokens()).toContain(used[0]);
        } else {
          expect(used[0]).toBe(current);
        }
        current = used[0]!;
        expect(api.violations).toEqual([]);
      }
    });
  }

  it("writes no provider token into any log line", () => {
    const lines = logs.lines();
    expect(lines).toContain("Access token refreshed");
    for (const token of started.provider.issuedTokens()) expect(lines.includes(token)).toBe(false);
  });
});
