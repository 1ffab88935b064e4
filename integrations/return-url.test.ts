import { describe, expect, it } from "vitest";
import { isAllowedReturnUrl, withOutcome } from "./return-url.ts";

describe("return URL allow list", () => {
  const hosts = ["app.example.com", "localhost:3000"];

  it.each([
    ["https://app.example.com/settings/integrations", true],
    ["https://APP.example.com:8443/x", true],
    ["http://localhost:3000/back", true],
    ["http://localhost:4000/back", false],
    ["https://evil.example.com/", false],
    ["https://app.example.com.evil.com/", false],
    ["https://app.example.com@evil.com/", false],
    ["https://user:pw@app.example.com/", false],
    ["//evil.com/", false],
    ["/relative", false],
    ["javascript:alert(1)", false],
  ])("%s → %s", (url, allowed) => {
    expect(isAllowedReturnUrl(url, hosts)).toBe(allowed);
  });

  it("adds the outcome to the query, keeping what was there", () => {
    expect(withOutcome("https://app.example.com/i?tab=2", { status: "connected" })).toBe(
      "https://app.example.com/i?tab=2&status=connected",
    );
  });
});
