import { KubecrewError } from "../../core/errors.ts";

/**
 * Failures that happen while a request is read, before any route runs: a malformed %-escape in the path (the router
 * throws URIError), a body that is not valid for its Content-Encoding, an unknown encoding, a body nested too deep,
 * an aborted upload. They are the client's fault: each service answers them as 4xx in its own error body and logs
 * them at most at debug. undefined for anything else.
 */
export interface RequestFault {
  status: number;
  message: string;
}

export function requestFault(err: unknown, contentEncoding?: string): RequestFault | undefined {
  if (err instanceof URIError) return { status: 400, message: "The request path has a malformed %-escape" };
  const e = (err ?? {}) as { status?: unknown; type?: unknown; code?: unknown; message?: unknown };
  if (e.type === "entity.too.deep") return { status: 400, message: String(e.message) };
  if (e.type === "encoding.unsupported" || e.type === "charset.unsupported") {
    return { status: 415, message: "Request body encoding is not supported" };
  }
  if (e.type === "request.aborted" || e.type === "request.size.invalid") {
    return { status: 400, message: "Request body ended before its declared length" };
  }
  // body-parser hands on the decompression stream's error with status 400 and zlib's code (Z_DATA_ERROR, ERR_…);
  // kubecrew's own errors carry a `code` too, and are not that.
  const zlibCode = typeof e.code === "string" && !(err instanceof KubecrewError);
  if (e.status === 400 && e.type === undefined && zlibCode && contentEncoding) {
    return { status: 400, message: `Request body is not valid ${contentEncoding.toLowerCase()} data` };
  }
  return undefined;
}
