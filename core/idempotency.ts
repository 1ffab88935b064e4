import { createHash } from "node:crypto";

/**
 * Kickoff idempotency (the IETF httpapi Idempotency-Key draft, as payment APIs use it): a retried kickoff carrying the
 * same key answers the kickoff_id of the first one for 24 hours instead of starting a second run. The key is scoped to
 * the crew and the caller and kept only as a hash; the request body is kept as a hash to tell a retry from a reuse.
 */

/** How long a key holds after the kickoff that recorded it. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
export const IDEMPOTENCY_HEADER = "Idempotency-Key";

/** What a backend needs to record a keyed kickoff and to recognise its retries. */
export interface IdempotentKickoff {
  /** SHA-256 (hex) of the key and its scope (crew, token kind, subject). */
  keyHash: string;
  /** SHA-256 (hex) of the kickoff body in canonical form. */
  requestHash: string;
}

/** A kickoff recorded under a key, as a backend finds it again. */
export interface RecordedKickoff extends IdempotentKickoff {
  createdAt: Date;
}

/**
 * What an earlier kickoff under the same key means for this one: `replay` (same body, answer its kickoff_id),
 * `reused` (a different body: 422), `expired` (older than the window: the key starts a new run), or `foreign` (the
 * object found is not recorded under this key).
 */
export type KeyVerdict = "replay" | "reused" | "expired" | "foreign";

export function judgeRecorded(
  recorded: RecordedKickoff | undefined,
  request: IdempotentKickoff,
  now: Date,
): KeyVerdict {
  if (!recorded || recorded.keyHash !== request.keyHash) return "foreign";
  if (now.getTime() - recorded.createdAt.getTime() >= IDEMPOTENCY_WINDOW_MS) return "expired";
  return recorded.requestHash === request.requestHash ? "replay" : "reused";
}

/**
 * The key from the header's value: a Structured Field string (`"…"`, as the draft writes it) or the bare characters
 * (as most clients send it), 1–255 visible ASCII characters. Answers a reason when the header is malformed; a header
 * sent twice arrives joined with ", " and is refused for the space.
 */
export function parseIdempotencyKey(value: string | undefined): { key?: string } | { problem: string } {
  if (value === undefined) return {};
  let key = value.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) {
    const unquoted = unquote(key.slice(1, -1));
    if (unquoted === undefined) return { problem: "is not a valid quoted string" };
    key = unquoted;
  }
  if (key.length === 0) return { problem: "is empty" };
  if (key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    return { problem: `is longer than ${IDEMPOTENCY_KEY_MAX_LENGTH} characters` };
  }
  if (!/^[\x21-\x7e]+$/.test(key)) return { problem: "may hold only visible ASCII characters (no spaces, one key)" };
  return { key };
}

/** The key's hash within its scope: the same key from another crew or another caller is another key. */
export function idempotencyKeyHash(scope: { crew: string; kind: string; subject: string }, key: string): string {
  return sha256(JSON.stringify(["kickoff", scope.crew, scope.kind, scope.subject, key]));
}

/** A body's hash that ignores key order and whitespace (the same JSON sent again is the same request). */
export function requestHash(body: unknown): string {
  return sha256(canonicalJson(body));
}

/**
 * The kickoff_id of the run a key starts: a UUID (version 8, name-based on SHA-256 as RFC 9562 describes) derived
 * from the key's hash, so that every API replica names the run the same and the store's "already exists" decides a
 * race. `generation` moves on when an earlier run under the key is older than the window.
 */
export function idempotentExecutionId(keyHash: string, generation: number): string {
  const bytes = createHash("sha256").update(`${keyHash}/${generation}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The content of a Structured Field string: `\"` and `\\` are its only escapes; a bare `"` ends it. */
function unquote(inner: string): string | undefined {
  let out = "";
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (c === '"') return undefined;
    if (c === "\\") {
      const next = inner[++i];
      if (next !== '"' && next !== "\\") return undefined;
      out += next;
    } else out += c;
  }
  return out;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
