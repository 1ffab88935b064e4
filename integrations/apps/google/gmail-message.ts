/** Builds the RFC 5322 message Gmail's send and drafts.create take as `raw` (base64url). */
export interface OutgoingMail {
  to: string[];
  cc?: string[] | undefined;
  bcc?: string[] | undefined;
  subject: string;
  body: string;
}

/** RFC 2047 encoded-word for a header value that is not plain ASCII. */
function headerText(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : `=?UTF-8?B?${Buffer.from(value, "utf8").toString("base64")}?=`;
}

export function rawMessage(mail: OutgoingMail): string {
  const headers = [
    `To: ${mail.to.join(", ")}`,
    ...(mail.cc?.length ? [`Cc: ${mail.cc.join(", ")}`] : []),
    ...(mail.bcc?.length ? [`Bcc: ${mail.bcc.join(", ")}`] : []),
    `Subject: ${headerText(mail.subject)}`,
    "MIME-Version: 1.0",
    'Content-Type: text/plain; charset="UTF-8"',
    "Content-Transfer-Encoding: base64",
  ];
  const body = (
    Buffer.from(mail.body, "utf8")
      .toString("base64")
      .match(/.{1,76}/g) ?? []
  ).join("\r\n");
  return Buffer.from(`${headers.join("\r\n")}\r\n\r\n${body}\r\n`, "utf8").toString("base64url");
}

interface MessagePart {
  mimeType?: string | null;
  body?: { data?: string | null } | null;
  parts?: MessagePart[] | null;
}

/** The text of a Gmail message payload: its first text/plain part, else its first text/html part without tags. */
export function messageText(payload: MessagePart | undefined | null): string {
  const find = (part: MessagePart | undefined | null, type: string): string | undefined => {
    if (!part) return undefined;
    if (part.mimeType === type && part.body?.data) return Buffer.from(part.body.data, "base64url").toString("utf8");
    for (const child of part.parts ?? []) {
      const found = find(child, type);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  const plain = find(payload, "text/plain");
  if (plain !== undefined) return plain;
  const html = find(payload, "text/html");
  return html === undefined
    ? ""
    : html
        .replace(/<[^>]*>/g, " ")
        .replace(/\s+/g, " ")
        .trim();
}

export function headerValue(
  headers: { name?: string | null; value?: string | null }[] | undefined | null,
  name: string,
) {
  return headers?.find((h) => h.name?.toLowerCase() === name.toLowerCase())?.value ?? undefined;
}
