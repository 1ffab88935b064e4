import { get } from "node:http";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCheckedNodeAgent } from "./node-agent.ts";
import { clusterPolicy, localPolicy } from "../../core/outbound/policy.ts";

let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((_req, res) => res.end("ok"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function fetchWith(agent: ReturnType<typeof createCheckedNodeAgent>, url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c));
      res.on("end", () => resolve(body));
    }).on("error", reject);
  });
}

describe("checked Node agent", () => {
  it("connects where the policy allows", async () => {
    expect(await fetchWith(createCheckedNodeAgent(localPolicy, "http:"), `http://127.0.0.1:${port}/`)).toBe("ok");
  });

  it("refuses an IP-literal host the policy refuses, before connecting", async () => {
    await expect(
      fetchWith(createCheckedNodeAgent(clusterPolicy, "http:"), `http://127.0.0.1:${port}/`),
    ).rejects.toThrow(/loopback address/);
  });

  it("refuses a name that resolves to a refused address (metadata), and connects to the address it checked", async () => {
    const metadata = createCheckedNodeAgent(localPolicy, "http:", async () => [
      { address: "169.254.169.254", family: 4 },
    ]);
    await expect(fetchWith(metadata, "http://api.example.test/")).rejects.toThrow(/cloud metadata/);
    const pinned = createCheckedNodeAgent(localPolicy, "http:", async () => [{ address: "127.0.0.1", family: 4 }]);
    expect(await fetchWith(pinned, `http://api.example.test:${port}/`)).toBe("ok");
  });
});
