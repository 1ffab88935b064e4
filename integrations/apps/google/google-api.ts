import type { Fetch } from "../../../platform/outbound/outbound-fetch.ts";
import { ProviderApiError, type ActionContext } from "../app-action.ts";

/**
 * gaxios hands a custom fetch its multipart upload bodies as an object-mode Node stream of strings, which fetch cannot
 * send; such a body (bounded by the actions' input limits) is collected into bytes first.
 */
function withCollectedBody(fetch: Fetch): Fetch {
  return async (input, init) => {
    const body = init?.body as unknown;
    if (body && typeof body === "object" && Symbol.asyncIterator in body && !(body instanceof ReadableStream)) {
      const chunks: Buffer[] = [];
      for await (const chunk of body as AsyncIterable<string | Uint8Array>)
        chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk));
      const { duplex: _duplex, ...rest } = init as RequestInit & { duplex?: string };
      return fetch(input, { ...rest, body: Buffer.concat(chunks) });
    }
    return fetch(input, init);
  };
}

/**
 * Options for Google's per-API SDK clients (@googleapis/*): the user's access token as the Authorization header, the
 * outbound client's fetch (the one URL policy), KUBECREW_GOOGLE_API_BASE_URL as `rootUrl` when set, and no SDK retries (a tool
 * call answers once; the model decides what to do next).
 */
export function googleOptions(context: ActionContext) {
  return {
    ...(context.apiRoots.google ? { rootUrl: context.apiRoots.google.href } : {}),
    headers: { authorization: `Bearer ${context.accessToken}` },
    fetchImplementation: withCollectedBody(context.fetch),
    retry: false,
    ...(context.signal ? { signal: context.signal } : {}),
  };
}

interface GaxiosLike {
  status?: number;
  response?: { status?: number; data?: unknown };
}

/** Runs one SDK call; a Google error answer becomes a ProviderApiError with Google's status and message. */
export async function google<T>(call: () => Promise<{ data: T }>): Promise<T> {
  try {
    return (await call()).data;
  } catch (error) {
    const status = (error as GaxiosLike).response?.status ?? (error as GaxiosLike).status;
    if (typeof status !== "number") throw error;
    const data = (error as GaxiosLike).response?.data as { error?: { message?: unknown } | string } | undefined;
    const message =
      typeof data?.error === "object" && typeof data.error.message === "string"
        ? data.error.message
        : typeof data?.error === "string"
          ? data.error
          : `HTTP ${status}`;
    throw new ProviderApiError(status, message);
  }
}
