import { createHash, hash, randomBytes } from "node:crypto";

/** Recognisable prefixes: a leaked token says what it is (as GitHub's ghp_ tokens do), and secret scanners can find it. */
export const tokenPrefixes = { org: "kco_", user: "kcu_", access: "kca_", clientSecret: "kcs_" } as const;
export type TokenKind = keyof typeof tokenPrefixes;

/** A new random token: 256 bits, base64url, behind its kind's prefix. */
export function newToken(kind: TokenKind): string {
  return tokenPrefixes[kind] + randomBytes(32).toString("base64url");
}

/**
 * The stored form of a token or client secret. SHA-256 without salt or stretching is enough here: every secret is
 * 256 random bits, so there is no dictionary to try and a brute-force search is out of reach however fast the hash;
 * slow password hashes exist for low-entropy human passwords, and here they would only make every token request
 * cost CPU an attacker could ask for.
 */
export function secretHash(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

/** secretHash as hex (the stores' keys), in one step: a quarter of the CPU of hashing to a Buffer and converting. */
export function secretHashHex(secret: string): string {
  return hash("sha256", secret, "hex");
}

/** Non-secret identifiers, shown by `token list` / `client list` and used to revoke. */
export function newTokenId(): string {
  return "tok_" + randomBytes(8).toString("hex");
}

export function newClientId(): string {
  return "client_" + randomBytes(8).toString("hex");
}
