import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTokenCipher, encryptionKeyId, TamperedCiphertextError } from "./token-cipher.ts";

const key = Buffer.from("0f".repeat(32), "hex");

function flipCharacter(sealed: string, part: number): string {
  const parts = sealed.split(".");
  const bytes = Buffer.from(parts[part]!, "base64url");
  bytes[0] = bytes[0]! ^ 0x01;
  parts[part] = bytes.toString("base64url");
  return parts.join(".");
}

describe("token cipher", () => {
  const cipher = createTokenCipher(key);

  it("round-trips a token and never stores it in clear", () => {
    const sealed = cipher.encrypt("ya29.secret-access-token", "conn-1:access");
    expect(sealed).not.toContain("ya29");
    expect(sealed).not.toContain(Buffer.from("ya29.secret-access-token").toString("base64url"));
    expect(cipher.decrypt(sealed, "conn-1:access")).toBe("ya29.secret-access-token");
  });

  it("stores the key id and a fresh 12-byte IV per record", () => {
    const a = cipher.encrypt("same", "c");
    const b = cipher.encrypt("same", "c");
    expect(a).not.toBe(b);
    const [version, keyId, iv] = a.split(".");
    expect(version).toBe("v1");
    expect(keyId).toBe(encryptionKeyId(key));
    expect(keyId).toMatch(/^[0-9a-f]{8}$/);
    expect(Buffer.from(iv!, "base64url")).toHaveLength(12);
    expect(a.split(".")[2]).not.toBe(b.split(".")[2]);
  });

  it("detects tampering with the ciphertext, the IV or the tag", () => {
    const sealed = cipher.encrypt("refresh-token-value", "conn-1:refresh");
    for (const part of [2, 3, 4]) {
      expect(() => cipher.decrypt(flipCharacter(sealed, part), "conn-1:refresh")).toThrow(TamperedCiphertextError);
    }
  });

  it("refuses a ciphertext moved to another record or field", () => {
    const sealed = cipher.encrypt("refresh-token-value", "conn-1:refresh");
    expect(() => cipher.decrypt(sealed, "conn-2:refresh")).toThrow(/integrity check/);
    expect(() => cipher.decrypt(sealed, "conn-1:access")).toThrow(TamperedCiphertextError);
  });

  it("names the key a record was sealed with when the configured key differs", () => {
    const other = createTokenCipher(randomBytes(32));
    const sealed = other.encrypt("token", "c");
    expect(() => cipher.decrypt(sealed, "c")).toThrow(new RegExp(`encrypted under key ${other.keyId}`));
  });

  it("rejects malformed values without echoing them", () => {
    expect(() => cipher.decrypt("plain-token", "c")).toThrow("Stored token is not in the expected format");
  });

  it("requires a 32-byte key", () => {
    expect(() => createTokenCipher(Buffer.alloc(16))).toThrow(/32 bytes/);
  });
});
