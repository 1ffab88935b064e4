import { describe, expect, it } from "vitest";
import type { OidcSettings } from "./config.ts";
import { identityFromClaims } from "./oidc-sign-in.ts";

const settings: OidcSettings = {
  issuer: new URL("https://login.example.com"),
  clientId: "console",
  clientSecret: "secret",
  groupsClaim: "groups",
  adminGroups: ["kubecrew-admins"],
  adminEmails: ["ops@example.com"],
};

describe("who an ID token signs in", () => {
  it("makes admin emails and admin group members org admins of every crew", () => {
    expect(identityFromClaims({ sub: "1", email: "OPS@example.com", email_verified: true }, settings)).toEqual({
      kind: "org",
      crews: "*",
      subject: "ops@example.com",
      admin: true,
      name: "ops@example.com",
      // A person: their own connected apps are theirs to see in the Apps tab.
      user: "ops@example.com",
    });
    const member = identityFromClaims(
      { sub: "2", email: "x@example.com", groups: ["staff", "kubecrew-admins"] },
      settings,
    );
    expect(member).toMatchObject({ kind: "org", admin: true, subject: "x@example.com" });
  });

  it("makes everyone else a user, named by the verified email or else the subject", () => {
    expect(
      identityFromClaims({ sub: "3", email: "grace@example.com", name: "Grace", groups: "staff" }, settings),
    ).toEqual({
      kind: "user",
      crews: "*",
      subject: "grace@example.com",
      admin: false,
      name: "Grace <grace@example.com>",
    });
    // An unverified address is not trusted: neither as the subject nor for the admin list.
    expect(identityFromClaims({ sub: "4", email: "ops@example.com", email_verified: false }, settings)).toMatchObject({
      kind: "user",
      subject: "4",
      admin: false,
    });
  });
});
