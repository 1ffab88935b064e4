import { describe, expect, it } from "vitest";
import { readCookie, signCookieValue, verifyCookieValue } from "./signed-cookie.ts";
import { readSignInCookie, setSignInCookie } from "./sign-in-cookie.ts";

const secret = "s".repeat(32);

describe("signed cookies", () => {
  it("verifies its own signature and refuses a changed payload or another secret", () => {
    const value = signCookieValue({ state: "abc" }, secret);
    expect(verifyCookieValue(value, secret)).toEqual({ state: "abc" });
    const forged =
      Buffer.from(JSON.stringify({ state: "evil" })).toString("base64url") + value.slice(value.indexOf("."));
    expect(verifyCookieValue(forged, secret)).toBeUndefined();
    expect(verifyCookieValue(value, "t".repeat(32))).toBeUndefined();
    expect(verifyCookieValue("garbage", secret)).toBeUndefined();
  });

  it("reads one cookie out of a Cookie header", () => {
    expect(readCookie("a=1; b=two%20words; c=3", "b")).toBe("two words");
    expect(readCookie("a=1", "b")).toBeUndefined();
    expect(readCookie(undefined, "b")).toBeUndefined();
  });

  it("sets the sign-in cookie httpOnly, SameSite=Lax, on the callback path, and expires it", () => {
    const now = 1_000_000;
    const header = setSignInCookie(
      { state: "st", codeVerifier: "v".repeat(43), expiresAt: now + 600_000 },
      { secret, path: "/oauthsvc/v1/auth", secure: true },
      now,
    );
    expect(header).toMatch(/; Path=\/oauthsvc\/v1\/auth; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
    const cookieHeader = header.split(";")[0]!;
    expect(readSignInCookie(cookieHeader, secret, now)).toEqual({
      state: "st",
      codeVerifier: "v".repeat(43),
      expiresAt: now + 600_000,
    });
    expect(readSignInCookie(cookieHeader, secret, now + 600_001)).toBeUndefined();
  });
});
