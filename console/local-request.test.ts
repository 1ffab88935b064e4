import { describe, expect, it } from "vitest";
import { isLoopbackAddress, isLoopbackBind, isLoopbackHost } from "./local-request.ts";

// Issue 28 item 2: `kubecrew dev` signs the local user in only for loopback clients naming it by a loopback Host.

describe("isLoopbackAddress (the TCP peer)", () => {
  it.each(["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1", "::ffff:127.3.2.1"])("%s is loopback", (address) => {
    expect(isLoopbackAddress(address)).toBe(true);
  });
  it.each([
    "10.0.0.1",
    "192.168.1.20",
    "172.17.0.1", // Docker's bridge: a published port's clients
    "::ffff:10.0.0.1",
    "2001:db8::1",
    "fe80::1",
    "0.0.0.0",
    "::",
    "128.0.0.1",
    "",
    undefined,
    "localhost",
  ])("%s is not", (address) => {
    expect(isLoopbackAddress(address)).toBe(false);
  });
});

describe("isLoopbackHost (the Host header)", () => {
  it.each([
    "localhost",
    "localhost:8080",
    "LOCALHOST:8080",
    "console.localhost:8080",
    "a.b.localhost",
    "127.0.0.1:8080",
    "127.1.2.3",
    "[::1]:8080",
    "[::1]",
  ])("%s is loopback", (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });
  it.each([
    "rebind.attacker.example:8080",
    "localhost.attacker.example",
    "attacker-localhost:8080",
    "localhost.",
    "127.0.0.1.nip.io:8080",
    "127.1:8080", // not a dotted quad: a name a resolver may answer anything for
    "10.0.0.5:8080",
    "[2001:db8::1]:8080",
    "[::1]x",
    "localhost:8080:1",
    "",
    undefined,
  ])("%s is not", (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });
});

describe("isLoopbackBind (HOST)", () => {
  it.each([
    ["127.0.0.1", true],
    ["::1", true],
    ["localhost", true],
    ["0.0.0.0", false],
    ["::", false],
    ["192.168.1.20", false],
    ["my-laptop.lan", false],
  ])("%s: %s", (host, loopback) => {
    expect(isLoopbackBind(host)).toBe(loopback);
  });
});
