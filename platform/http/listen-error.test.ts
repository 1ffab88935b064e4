import { describe, expect, it } from "vitest";
import { ListenError } from "./listen-error.ts";

const fault = (code: string, message: string) => Object.assign(new Error(message), { code });
const dev = { host: "HOST", port: "PORT" };

describe("ListenError.explain", () => {
  it.each([
    ["EADDRINUSE", "127.0.0.1", 8080, "port 8080 is in use (PORT)"],
    ["EACCES", "0.0.0.0", 80, "cannot listen on 0.0.0.0:80: not permitted (ports below 1024 need privileges) (PORT)"],
    [
      "EADDRNOTAVAIL",
      "10.255.255.1",
      8080,
      "cannot listen on 10.255.255.1:8080: no network interface of this machine has the address 10.255.255.1 (HOST)",
    ],
    [
      "ENOTFOUND",
      "no-such-host.invalid",
      8080,
      "cannot listen on no-such-host.invalid:8080: no-such-host.invalid is neither an IP address nor a host name " +
        "that resolves (HOST)",
    ],
    [
      "EINVAL",
      "fe80::1",
      8080,
      "cannot listen on [fe80::1]:8080: this machine cannot listen on fe80::1 (EINVAL) (HOST)",
    ],
    ["EMFILE", "127.0.0.1", 8080, "cannot listen on 127.0.0.1:8080: too many open files (HOST, PORT)"],
  ])("%s on %s:%d", (code, host, port, line) => {
    const message = code === "EMFILE" ? "too many open files" : `listen ${code}`;
    expect(new ListenError(host, port, fault(code, message)).explain(dev)).toBe(line);
  });
});
