/** client_id and client_secret from `Authorization: Basic …`. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * Parses HTTP Basic client authentication as RFC 6749 §2.3.1 defines it: base64 of `id:secret`, where each part was
 * application/x-www-form-urlencoded before joining, so the split is at the first colon and each side is decoded
 * after it ("+" is a space, %XX an octet of UTF-8). Undefined for anything else (another scheme, bad base64 or
 * percent-encoding, no colon, an empty client_id).
 */
export function basicClientCredentials(header: string | undefined): ClientCredentials | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header ?? "");
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  const clientId = formDecode(decoded.slice(0, colon));
  const clientSecret = formDecode(decoded.slice(colon + 1));
  if (!clientId || clientSecret === undefined) return undefined;
  return { clientId, clientSecret };
}

function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, " "));
  } catch {
    return undefined;
  }
}
