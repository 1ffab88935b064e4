import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  AppCredentialError,
  appsSigningKeyFrom,
  mintAppCredential,
  verifyAppCredential,
  type AppCredentialGrant,
} from "./app-credential.ts";
import { ConfigError } from "./config.ts";

const key = "k".repeat(40);
const otherKey = "o".repeat(40);
const expiresAt = new Date("2026-06-01T12:00:00Z");
const before = new Date("2026-06-01T11:00:00Z");
const grant: AppCredentialGrant = {
  executionUid: "0d6c1f7e-3b1a-4c55-9f8e-5a8d2f9b6c11",
  execution: "team-a/3f2b",
  user: "alice",
  apps: ["gmail", "google_calendar/list_events"],
  expiresAt,
};

async function refusal(promise: Promise<unknown>): Promise<AppCredentialError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppCredentialError);
  return error as AppCredentialError;
}

describe("app credential", () => {
  it("carries the execution, the user and the apps to the integrations service", async () => {
    const token = await mintAppCredential(key, grant);
    const claims = await verifyAppCredential(key, token, before);
    expect(claims).toMatchObject({
      executionUid: grant.executionUid,
      execution: "team-a/3f2b",
      user: "alice",
      apps: ["gmail", "google_calendar/list_events"],
      expiresAt,
    });
    expect(claims.issuedAt).toBeInstanceOf(Date);
  });

  it("may name no user (the tools then answer that the execution has none)", async () => {
    const token = await mintAppCredential(key, { ...grant, user: null });
    expect((await verifyAppCredential(key, token, before)).user).toBeNull();
  });

  it("is refused as expired at and after its expiry", async () => {
    const token = await mintAppCredential(key, grant);
    expect((await refusal(verifyAppCredential(key, token, new Date(expiresAt.getTime() + 1000)))).problem).toBe(
      "expired",
    );
  });

  it("is refused when signed with another key", async () => {
    const forged = await mintAppCredential(otherKey, grant);
    expect((await refusal(verifyAppCredential(key, forged, before))).problem).toBe("bad_signature");
  });

  it("is refused when its payload was changed (another user) without the key", async () => {
    const [header, payload, signature] = (await mintAppCredential(key, grant)).split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString()) as Record<string, unknown>;
    const tampered = Buffer.from(JSON.stringify({ ...claims, sub: "mallory" })).toString("base64url");
    expect((await refusal(verifyAppCredential(key, `${header}.${tampered}.${signature}`, before))).problem).toBe(
      "bad_signature",
    );
  });

  it("refuses what is not one of its credentials: garbage, another audience, alg none, missing claims", async () => {
    expect((await refusal(verifyAppCredential(key, "not-a-jwt", before))).problem).toBe("malformed");
    const secret = new TextEncoder().encode(key);
    const exp = Math.floor(expiresAt.getTime() / 1000);
    const otherAudience = await new SignJWT({ execution: "a/b", apps: [] })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("kubecrew-controller")
      .setAudience("someone-else")
      .setJti("u")
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(secret);
    expect((await refusal(verifyAppCredential(key, otherAudience, before))).problem).toBe("malformed");
    const noApps = await new SignJWT({ execution: "a/b" })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("kubecrew-controller")
      .setAudience("kubecrew-integrations")
      .setJti("u")
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(secret);
    expect((await refusal(verifyAppCredential(key, noApps, before))).problem).toBe("malformed");
    const unsigned = [
      Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url"),
      (await mintAppCredential(key, grant)).split(".")[1],
      "",
    ].join(".");
    expect((await refusal(verifyAppCredential(key, unsigned, before))).problem).toBe("malformed");
  });
});

describe("KUBECREW_APPS_SIGNING_KEY", () => {
  it("is read with the config convention: missing or short is one line naming the variable", () => {
    expect(appsSigningKeyFrom({ KUBECREW_APPS_SIGNING_KEY: key })).toBe(key);
    expect(() => appsSigningKeyFrom({})).toThrow(ConfigError);
    expect(() => appsSigningKeyFrom({})).toThrow(/^Invalid configuration: KUBECREW_APPS_SIGNING_KEY: is required/);
    expect(() => appsSigningKeyFrom({ KUBECREW_APPS_SIGNING_KEY: "short" })).toThrow(
      "Invalid configuration: KUBECREW_APPS_SIGNING_KEY: must be at least 32 characters (generate one with `openssl rand -hex 32`)",
    );
  });
});
