import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, request, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { clusterPolicy, localPolicy } from "../core/outbound/policy.ts";
import { startEgressProxy, type EgressProxy } from "./egress-proxy.ts";

// The proxy against a real HTTP server on loopback; names resolve through a scripted resolver.
let target: Server;
let port: number;
const proxies: EgressProxy[] = [];
beforeAll(async () => {
  target = createServer((req, res) => res.end(`hello from ${req.headers.host}`));
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  port = (target.address() as AddressInfo).port;
});
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  await new Promise<void>((resolve) => target.close(() => resolve()));
});

async function proxy(...args: Parameters<typeof startEgressProxy>) {
  const p = await startEgressProxy(...args);
  proxies.push(p);
  return p;
}

/** A plain HTTP request through the proxy (absolute URL in the request line). */
function viaProxy(proxyUrl: string, url: string): Promise<{ status: number; body: string }> {
  const p = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: p.hostname, port: p.port, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A CONNECT through the proxy; the tunnel's first bytes are an HTTP request to the target. */
function tunnel(proxyUrl: string, authority: string): Promise<{ statusLine: string; answer: string }> {
  const p = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(p.port), p.hostname);
    let data = "";
    let statusLine = "";
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
    socket.on("data", (chunk: string) => {
      data += chunk;
      if (!statusLine && data.includes("\r\n\r\n")) {
        statusLine = data.split("\r\n")[0]!;
        const rest = data.slice(data.indexOf("\r\n\r\n") + 4);
        data = rest;
        if (statusLine.includes(" 200 "))
          socket.write(`GET / HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`);
      }
    });
    socket.on("end", () => resolve({ statusLine, answer: data }));
    socket.on("error", reject);
  });
}

describe("the egress proxy", () => {
  it("forwards plain HTTP and tunnels CONNECT where the policy allows", async () => {
    const p = await proxy(localPolicy);
    expect(await viaProxy(p.url, `http://127.0.0.1:${port}/x`)).toEqual({
      status: 200,
      body: `hello from 127.0.0.1:${port}`,
    });
    const through = await tunnel(p.url, `127.0.0.1:${port}`);
    expect(through.statusLine).toBe("HTTP/1.1 200 Connection Established");
    expect(through.answer).toContain(`hello from 127.0.0.1:${port}`);
    expect(p.refusals()).toEqual([]);
  });

  it("refuses a refused address with 403 and the policy's message, in the body and the CONNECT status line", async () => {
    const p = await proxy(clusterPolicy);
    const plain = await viaProxy(p.url, `http://127.0.0.1:${port}/`);
    expect(plain.status).toBe(403);
    expect(plain.body).toMatch(/^refused by the outbound URL policy: .*loopback/);
    const metadata = await tunnel(p.url, "169.254.169.254:443");
    expect(metadata.statusLine).toBe(
      "HTTP/1.1 403 refused by the outbound URL policy: 169.254.169.254 is a cloud metadata address; calls to it are refused",
    );
    expect(p.refusals()).toHaveLength(2);
  });

  it("resolves a name once, refuses it when an address is refused, and connects to the address it checked", async () => {
    const asked: string[] = [];
    let answers = [[{ address: "127.0.0.1", family: 4 }], [{ address: "169.254.169.254", family: 4 }]];
    const resolver = async (name: string) => {
      asked.push(name);
      // A rebinding name: allowed the first time it is resolved, the metadata address after that.
      const [first, ...rest] = answers;
      answers = rest.length ? rest : [first!];
      return first!;
    };
    const p = await proxy(localPolicy, { resolver });
    const through = await tunnel(p.url, `rebind.example:${port}`);
    expect(through.answer).toContain(`hello from rebind.example:${port}`);
    expect(asked).toEqual(["rebind.example"]);
    const second = await viaProxy(p.url, `http://rebind.example:${port}/`);
    expect(second.status).toBe(403);
    expect(second.body).toBe(
      "refused by the outbound URL policy: rebind.example resolves to 169.254.169.254: 169.254.169.254 is a cloud metadata address; calls to it are refused",
    );
  });

  it("answers 502 naming a host that cannot be resolved", async () => {
    const p = await proxy(localPolicy, {
      resolver: async () => {
        throw new Error("getaddrinfo ENOTFOUND nowhere.invalid");
      },
    });
    const answer = await viaProxy(p.url, "http://nowhere.invalid/");
    expect(answer.status).toBe(502);
    expect(answer.body).toContain("nowhere.invalid cannot be resolved");
  });
});
