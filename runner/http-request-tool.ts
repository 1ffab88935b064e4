import { z } from "zod";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import { hostAllowed } from "./allowed-hosts.ts";
import { MAX_HTTP_BODY_BYTES, MAX_TOOL_OUTPUT_CHARS } from "./tool-limits.ts";
import { KubecrewError } from "../core/errors.ts";

/** The built-in `http_request` tool: one HTTP request to a host the crew's toolPolicy allows. */
export const HTTP_REQUEST_TOOL = "http_request";
export const HTTP_REQUEST_TIMEOUT_MS = 30_000;

export const httpRequestInput = z.object({
  method: z.enum(["GET", "POST", "PUT", "DELETE"]).describe("HTTP method"),
  url: z.string().describe("Absolute http(s) URL; its host must be one of the crew's allowed hosts"),
  headers: z.record(z.string(), z.string()).optional().describe("Request headers"),
  body: z.string().optional().describe("Request body, e.g. JSON text (not with GET)"),
});
export type HttpRequestInput = z.infer<typeof httpRequestInput>;

export const HTTP_REQUEST_DESCRIPTION =
  "Sends one HTTP request (GET, POST, PUT or DELETE) and returns the status, the content type and the response body " +
  "(long bodies are cut, with a marker). Only hosts the crew allows can be called; redirects are returned, not followed.";

/** A request the tool refuses to send; the model receives the message as the tool's result. */
export class HttpRequestRefused extends KubecrewError {
  readonly code = "http_request_refused";
  override name = "HttpRequestRefused";
}

async function readBounded(response: Response, limit: number): Promise<{ bytes: Buffer; complete: boolean }> {
  if (!response.body) return { bytes: Buffer.alloc(0), complete: true };
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(chunks), complete: true };
      chunks.push(Buffer.from(value));
      size += value.byteLength;
      if (size > limit) return { bytes: Buffer.concat(chunks).subarray(0, limit), complete: false };
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * Sends the request through the outbound fetch (the URL policy judges every address) after checking the host
 * against `allowedHosts`. The answer for the model: `HTTP <status> <text>`, the content type (and Location of a
 * redirect), a blank line and the body, cut at MAX_TOOL_OUTPUT_CHARS with a marker saying how much there was.
 */
export async function httpRequest(
  input: HttpRequestInput,
  deps: { fetch: Fetch; allowedHosts: readonly string[]; signal?: AbortSignal; timeoutMs?: number },
): Promise<string> {
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    throw new HttpRequestRefused(`"${input.url.slice(0, 200)}" is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new HttpRequestRefused(`${url.protocol} URLs are refused: only http and https`);
  }
  if (!hostAllowed(url, deps.allowedHosts)) {
    const allowed = deps.allowedHosts.length ? deps.allowedHosts.join(", ") : "none";
    throw new HttpRequestRefused(`${url.host} is not in the crew's toolPolicy.allowedHosts (allowed: ${allowed})`);
  }
  if (input.method === "GET" && input.body !== undefined) throw new HttpRequestRefused("A GET request has no body");
  const timeoutMs = deps.timeoutMs ?? HTTP_REQUEST_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = deps.signal ? AbortSignal.any([deps.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await deps.fetch(url, {
      method: input.method,
      headers: input.headers,
      body: input.body,
      redirect: "manual",
      signal,
    });
  } catch (error) {
    if (timeout.aborted) throw new Error(`No response within ${timeoutMs / 1000} s`, { cause: error });
    throw error;
  }
  const { bytes, complete } = await readBounded(response, MAX_HTTP_BODY_BYTES);
  const head = [`HTTP ${response.status} ${response.statusText}`.trim()];
  const type = response.headers.get("content-type");
  if (type) head.push(`content-type: ${type}`);
  const location = response.headers.get("location");
  if (location && response.status >= 300 && response.status < 400) head.push(`location: ${location}`);
  const body = bytes.toString("utf8");
  const text = `${head.join("\n")}\n\n${body}`;
  if (complete && text.length <= MAX_TOOL_OUTPUT_CHARS) return text;
  const declared = Number(response.headers.get("content-length"));
  const size = complete
    ? `${bytes.length} bytes`
    : Number.isFinite(declared) && declared > 0
      ? `${declared} bytes`
      : `more than ${MAX_HTTP_BODY_BYTES} bytes`;
  // Room for the marker, so the tool's wrapper does not cut the text a second time.
  const kept = text.slice(0, MAX_TOOL_OUTPUT_CHARS - 200);
  return `${kept}\n[truncated: the response body (${size}) is cut here; ${kept.length} characters shown]`;
}
