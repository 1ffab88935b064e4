import { describe, expect, it } from "vitest";
import { hostAllowed } from "./allowed-hosts.ts";

const allowed = (url: string, patterns: string[]) => hostAllowed(new URL(url), patterns);

describe("hostAllowed", () => {
  it("matches a host exactly, case-insensitively, any port when the pattern has none", () => {
    expect(allowed("https://api.example.com/v1", ["api.example.com"])).toBe(true);
    expect(allowed("http://API.Example.com.:8080/", ["api.example.com"])).toBe(true);
    expect(allowed("https://example.com/", ["api.example.com"])).toBe(false);
    expect(allowed("https://api.example.com.evil.net/", ["api.example.com"])).toBe(false);
  });

  it("matches subdomains with *., not the bare domain or look-alikes", () => {
    expect(allowed("https://a.example.com/", ["*.example.com"])).toBe(true);
    expect(allowed("https://a.b.example.com/", ["*.example.com"])).toBe(true);
    expect(allowed("https://example.com/", ["*.example.com"])).toBe(false);
    expect(allowed("https://badexample.com/", ["*.example.com"])).toBe(false);
  });

  it("compares the port when the pattern names one, the scheme's default otherwise", () => {
    expect(allowed("http://127.0.0.1:8080/x", ["127.0.0.1:8080"])).toBe(true);
    expect(allowed("http://127.0.0.1:8081/x", ["127.0.0.1:8080"])).toBe(false);
    expect(allowed("https://api.example.com/", ["api.example.com:443"])).toBe(true);
    expect(allowed("http://api.example.com/", ["api.example.com:443"])).toBe(false);
  });

  it("allows nothing when the list is empty", () => {
    expect(allowed("https://api.example.com/", [])).toBe(false);
  });
});
