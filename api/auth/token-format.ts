import { randomBytes } from "node:crypto";

/** Recognisable prefixes: a leaked token says what it is (as GitHub's ghp_ tokens do), and secret scanners can find it. */
export const tokenPrefixes = { org: "kco_", user: "kcu_", access: "kca_", clientSecret: "kcs_" } as const;
export type TokenKind = keyof typeof tokenPrefixes;

/** A new random token: 256 bits, base64url, behind its kind's prefix. */
export function newToken(kind: TokenKind): string {
  return tokenPrefixes[kind] + randomBytes(32).toString("base64url");
}
