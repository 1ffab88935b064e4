import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  capturingLogger,
  createConnectLink,
  type ProviderAndService,
  startProviderAndService,
  TestBrowser,
  uniquePrefix,
} from "./harness.ts";

describe("provider calls follow the outbound URL policy", () => {
  const redisUrl = inject("redisUrl");
  const logs = capturingLogger();
  let started: ProviderAndService | undefined;

  beforeAll(async () => {
    // The service's own default: loopback (where the test provider listens) is not opened.
    started = await startProviderAndService({
      redisUrl,
      prefix: uniquePrefix("outbound"),
      extra: { KUBECREW_OUTBOUND_ALLOW: "" },
      logger: logs.logger,
    });
  });
  afterAll(() => started?.stop());

  it("refuses a provider on a refused address: the sign-in answers 502 and the provider is never asked", async () => {
    const { service } = started!;
    const link = await createConnectLink(service.url, { userId: "user-eve", provider: "google", product: "gmail" });
    const end = await new TestBrowser().open(link.url);
    expect(end.status).toBe(502);
    expect(end.body).toContain(
      "could not be reached to start the sign-in: the outbound URL policy refuses its address",
    );
    expect(started!.provider.issuedTokens()).toEqual([]);
    expect(logs.lines()).not.toContain('"level":50');
  });
});
