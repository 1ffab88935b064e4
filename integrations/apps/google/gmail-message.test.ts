import { describe, expect, it } from "vitest";
import { messageText, rawMessage } from "./gmail-message.ts";
import { gmailActions } from "./gmail.ts";
import { z } from "zod";

const decode = (raw: string) => Buffer.from(raw, "base64url").toString("utf8");

describe("Gmail messages", () => {
  it("builds an RFC 5322 message with an encoded non-ASCII subject and a base64 UTF-8 body", () => {
    const message = decode(
      rawMessage({
        to: ["a@example.com", "b@example.com"],
        cc: ["c@example.com"],
        subject: "Grüße",
        body: "Hallo — ü",
      }),
    );
    const [head, body] = message.split("\r\n\r\n");
    expect(head).toBe(
      [
        "To: a@example.com, b@example.com",
        "Cc: c@example.com",
        `Subject: =?UTF-8?B?${Buffer.from("Grüße").toString("base64")}?=`,
        "MIME-Version: 1.0",
        'Content-Type: text/plain; charset="UTF-8"',
        "Content-Transfer-Encoding: base64",
      ].join("\r\n"),
    );
    expect(Buffer.from(body!.replace(/\r\n/g, ""), "base64").toString("utf8")).toBe("Hallo — ü");
  });

  it("refuses a subject or address that would inject headers", () => {
    const input = z.object(gmailActions.send_email.input);
    expect(input.safeParse({ to: ["a@example.com"], subject: "hi\r\nBcc: x@evil.example", body: "" }).success).toBe(
      false,
    );
    expect(input.safeParse({ to: ["a@example.com\r\nBcc: x@evil.example"], subject: "hi", body: "" }).success).toBe(
      false,
    );
    expect(input.safeParse({ to: ["a@example.com"], subject: "hi", body: "multi\r\nline is fine" }).success).toBe(true);
  });

  it("reads the plain-text part, or the HTML part without tags", () => {
    const data = (text: string) => ({ data: Buffer.from(text).toString("base64url") });
    expect(
      messageText({
        mimeType: "multipart/alternative",
        parts: [
          { mimeType: "text/html", body: data("<b>x</b>") },
          { mimeType: "text/plain", body: data("plain") },
        ],
      }),
    ).toBe("plain");
    expect(messageText({ mimeType: "text/html", body: data("<p>Hello <b>you</b></p>") })).toBe("Hello you");
  });
});
