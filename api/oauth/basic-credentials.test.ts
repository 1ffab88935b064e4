import { describe, expect, it } from "vitest";
import { basicClientCredentials } from "./basic-credentials.ts";

const header = (raw: string) => "Basic " + Buffer.from(raw, "utf8").toString("base64");

describe("basicClientCredentials (RFC 6749 §2.3.1)", () => {
  it("splits at the first colon and form-decodes each side after the split", () => {
    expect(basicClientCredentials(header("client_1:kcs_abc"))).toEqual({
      clientId: "client_1",
      clientSecret: "kcs_abc",
    });
    // An encoded colon in the id stays in the id; a raw colon in the secret stays in the secret.
    expect(basicClientCredentials(header("a%3Ab:c:d"))).toEqual({ clientId: "a:b", clientSecret: "c:d" });
    expect(basicClientCredentials(header("my+client:p%2Bq+r%25"))).toEqual({
      clientId: "my client",
      clientSecret: "p+q r%",
    });
    expect(basicClientCredentials(header("%C3%A9t%C3%A9:x"))).toEqual({ clientId: "été", clientSecret: "x" });
  });

  it("accepts any case of the scheme and an empty secret (rejected later by the store)", () => {
    expect(basicClientCredentials("basic " + Buffer.from("id:").toString("base64"))).toEqual({
      clientId: "id",
      clientSecret: "",
    });
  });

  it("rejects other schemes, bad base64, a missing colon, an empty id and broken percent-encoding", () => {
    for (const value of [
      undefined,
      "",
      "Bearer abc",
      "Basic",
      "Basic !!!",
      header("no-colon"),
      header(":secret"),
      header("%zz:secret"),
      header("id:%E0%A4%A"),
    ]) {
      expect(basicClientCredentials(value), String(value)).toBeUndefined();
    }
  });
});
