import type { Request, Response } from "express";
import { describe, expect, it } from "vitest";
import { ConsoleSessions, SESSION_COOKIE } from "./session.ts";

const identity = { kind: "user" as const, crews: "*" as const, subject: "alice", admin: false };

/** Signs in with a fake response and answers the cookie value it set. */
function signedCookie(sessions: ConsoleSessions): { value: string; csrf: string } {
  const headers: string[] = [];
  const res = { append: (_name: string, value: string) => headers.push(value) } as unknown as Response;
  const session = sessions.signIn({ secure: false } as Request, res, identity);
  const value = /^kubecrew_console=([^;]*)/.exec(headers[0]!)![1]!;
  expect(headers[0]).toMatch(/HttpOnly/i);
  expect(headers[0]).toMatch(/SameSite=Strict/i);
  return { value, csrf: session.csrf };
}
const request = (cookie: string, csrf?: string) =>
  ({
    headers: { cookie: `${SESSION_COOKIE}=${cookie}`, ...(csrf ? { "x-csrf-token": csrf } : {}) },
  }) as unknown as Request;

describe("console sessions", () => {
  const secret = "s".repeat(32);
  it("reads back a session it signed, with its CSRF token", () => {
    const sessions = new ConsoleSessions({ secret, ttlSeconds: 60 });
    const { value, csrf } = signedCookie(sessions);
    expect(sessions.principal(request(value))).toEqual({ kind: "user", crews: "*", subject: "alice" });
    expect(sessions.csrfValid(request(value, csrf))).toBe(true);
    expect(sessions.csrfValid(request(value, csrf.slice(1) + "A"))).toBe(false);
    expect(sessions.csrfValid(request(value))).toBe(false);
  });

  it("refuses a changed payload, another key's signature and an expired session", () => {
    let now = new Date("2026-01-01T00:00:00Z");
    const sessions = new ConsoleSessions({ secret, ttlSeconds: 60, now: () => now });
    const { value } = signedCookie(sessions);
    const [payload, signature] = value.split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, kind: "org", admin: true })).toString("base64url");
    expect(sessions.read(request(`${forged}.${signature}`))).toBeUndefined();
    const other = new ConsoleSessions({ secret: "t".repeat(32), ttlSeconds: 60, now: () => now });
    expect(other.read(request(value))).toBeUndefined();
    expect(sessions.read(request(value))?.subject).toBe("alice");
    now = new Date("2026-01-01T00:01:01Z");
    expect(sessions.read(request(value))).toBeUndefined();
  });
});
