import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOutboundClient, type Resolver } from "../../../platform/outbound/outbound-fetch.ts";
import { clusterPolicy, OutboundRefusedError, type OutboundPolicy } from "../../../core/outbound/policy.ts";

// A real receiver on loopback counts every connection it accepts: a refusal must happen before one is attempted.
let receiver: Server;
let port: number;
let connections = 0;
const seen: { host?: string; path?: string }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    seen.push({ host: req.headers.host, path: req.url });
    const redirect = new URL(req.url ?? "/", "http://x").searchParams.get("to");
    if (redirect) res.writeHead(302, { location: redirect }).end();
    else res.end("ok");
  });
  receiver.on("connection", () => connections++);
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  port = (receiver.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

/** Names the tests resolve without DNS: what a public name, an internal name and a metadata alias would answer. */
const names: Record<string, string[]> = {
  "hooks.test": ["127.0.0.1"],
  "metadata.test": ["169.254.169.254"],
  "internal.test": ["10.0.0.7"],
  "mixed.test": ["127.0.0.1", "169.254.10.1"],
};
const resolver: Resolver = async (hostname) => {
  const addresses = names[hostname];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  return addresses.map((address) => ({ address, family: 4 }));
};
/** The loopback receiver stands in for a public host: only its exact address is opened. */
const policy: OutboundPolicy = { ...clusterPolicy, allow: ["127.0.0.1"] };

async function refusal(promise: Promise<unknown>): Promise<OutboundRefusedError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundRefusedError);
  return err as OutboundRefusedError;
}

describe("outbound client", () => {
  it("connects to the address it checked and keeps the host name in the request", async () => {
    const client = createOutboundClient(policy, { resolver });
    const res = await client.fetch(`http://hooks.test:${port}/deliver`, { method: "POST", body: "{}" });
    expect(await res.text()).toBe("ok");
    expect(seen.at(-1)).toEqual({ host: `hooks.test:${port}`, path: "/deliver" });
    await client.close();
  });

  it("refuses a name that resolves to a metadata address before connecting", async () => {
    const client = createOutboundClient(policy, { resolver });
    const before = connections;
    const err = await refusal(client.fetch(`http://metadata.test:${port}/latest/meta-data/`));
    expect(err.reason).toBe("metadata");
    expect(err.message).toBe(
      "metadata.test resolves to 169.254.169.254: 169.254.169.254 is a cloud metadata address; calls to it are refused",
    );
    expect(connections).toBe(before);
    await client.close();
  });

  it("refuses a name when any of its addresses is refused", async () => {
    const client = createOutboundClient(policy, { resolver });
    const before = connections;
    expect((await refusal(client.fetch(`http://mixed.test:${port}/`))).reason).toBe("reserved");
    expect(connections).toBe(before);
    await client.close();
  });

  it("refuses private addresses when the policy does", async () => {
    const client = createOutboundClient({ ...policy, allowPrivate: false }, { resolver });
    expect((await refusal(client.fetch(`http://internal.test:${port}/`))).reason).toBe("private");
    await client.close();
  });

  it("refuses loopback in a cluster: a loopback receiver listening gets no connection", async () => {
    const client = createOutboundClient(clusterPolicy, { resolver });
    const before = connections;
    expect((await refusal(client.fetch(`http://127.0.0.1:${port}/`))).reason).toBe("loopback");
    expect((await refusal(client.fetch(`http://hooks.test:${port}/`))).reason).toBe("loopback");
    expect(connections).toBe(before);
    await client.close();
  });

  it("refuses other schemes without trying them", async () => {
    const client = createOutboundClient(policy, { resolver });
    expect((await refusal(client.fetch("file:///etc/passwd"))).reason).toBe("scheme");
    await client.close();
  });

  it("checks every redirect: to an IP literal and to a name resolving to a refused address", async () => {
    const client = createOutboundClient(policy, { resolver });
    const followed = await client.fetch(`http://hooks.test:${port}/?to=${encodeURIComponent("/landed")}`);
    expect(await followed.text()).toBe("ok");
    expect(seen.at(-1)?.path).toBe("/landed");

    const before = connections;
    const toMetadata = `http://hooks.test:${port}/?to=${encodeURIComponent("http://169.254.169.254/latest/")}`;
    expect((await refusal(client.fetch(toMetadata))).reason).toBe("metadata");
    const toName = `http://hooks.test:${port}/?to=${encodeURIComponent(`http://metadata.test:${port}/`)}`;
    expect((await refusal(client.fetch(toName))).reason).toBe("metadata");
    // The redirecting requests themselves reused the kept-alive connection: no new one, none to a refused address.
    expect(connections).toBe(before);
    await client.close();
  });

  it("resolves once per connection, so a name that rebinds after the check cannot reach the refused address", async () => {
    const answers = ["127.0.0.1", "169.254.169.254"];
    let lookups = 0;
    const rebinding: Resolver = async () => [{ address: answers[Math.min(lookups++, 1)]!, family: 4 }];
    const client = createOutboundClient(policy, { resolver: rebinding });
    const res = await client.fetch(`http://rebind.test:${port}/first`);
    expect(await res.text()).toBe("ok");
    expect(lookups).toBe(1); // the address connected to is the one checked: no second lookup to rebind
    await client.close();

    // A fresh connection asks again and gets the refused answer: refused, not connected.
    const second = createOutboundClient(policy, { resolver: rebinding });
    const before = connections;
    expect((await refusal(second.fetch(`http://rebind.test:${port}/second`))).reason).toBe("metadata");
    expect(connections).toBe(before);
    await second.close();
  });

  it("reports an unknown name as a plain fetch failure, not a refusal", async () => {
    const client = createOutboundClient(policy, { resolver });
    const err = await client.fetch("http://nowhere.test/").catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(OutboundRefusedError);
    expect(String((err as { cause?: Error }).cause?.message)).toContain("ENOTFOUND");
    await client.close();
  });
});
