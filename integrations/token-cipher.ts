import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { KubecrewError } from "../core/errors.ts";

/** Stored ciphertext could not be decrypted: tampered with, bound to another record, or under an unknown key. */
export class TamperedCiphertextError extends KubecrewError {
  readonly code = "tampered_ciphertext";
  override name = "TamperedCiphertextError";
}

/**
 * AES-256-GCM for provider tokens at rest. Each value is `v1.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts) with a
 * fresh random 12-byte IV; the key id lets a later key rotation find the right key. The caller's `context` (the
 * record id and field name) is authenticated as AAD, so a ciphertext moved to another record or field fails to open.
 */
export interface TokenCipher {
  keyId: string;
  encrypt(plaintext: string, context: string): string;
  decrypt(sealed: string, context: string): string;
}

/** The first 8 hex characters of the key's SHA-256: identifies the key without revealing it. */
export function encryptionKeyId(key: Buffer): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 8);
}

export function createTokenCipher(key: Buffer): TokenCipher {
  if (key.length !== 32) throw new Error("The token encryption key must be 32 bytes (64 hexadecimal characters)");
  const keyId = encryptionKeyId(key);
  return {
    keyId,
    encrypt(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      const tag = cipher.getAuthTag();
      return ["v1", keyId, iv.toString("base64url"), ciphertext.toString("base64url"), tag.toString("base64url")].join(
        ".",
      );
    },
    decrypt(sealed, context) {
      const parts = sealed.split(".");
      if (parts.length !== 5 || parts[0] !== "v1")
        throw new TamperedCiphertextError("Stored token is not in the expected format");
      const [, recordKeyId, ivPart, ciphertextPart, tagPart] = parts as [string, string, string, string, string];
      if (recordKeyId !== keyId) {
        throw new TamperedCiphertextError(
          `Stored token was encrypted under key ${recordKeyId}, but the configured key is ${keyId}`,
        );
      }
      const iv = Buffer.from(ivPart, "base64url");
      const tag = Buffer.from(tagPart, "base64url");
      if (iv.length !== 12 || tag.length !== 16)
        throw new TamperedCiphertextError("Stored token is not in the expected format");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: 16 });
        decipher.setAAD(Buffer.from(context, "utf8"));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(Buffer.from(ciphertextPart, "base64url")), decipher.final()]).toString(
          "utf8",
        );
      } catch {
        throw new TamperedCiphertextError(
          "Stored token failed its integrity check (tampered or bound to another record)",
        );
      }
    },
  };
}
