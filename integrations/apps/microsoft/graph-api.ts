import { Client, GraphError, type Middleware } from "@microsoft/microsoft-graph-client";
import { ProviderApiError, type ActionContext } from "../app-action.ts";

/**
 * A Microsoft Graph client (@microsoft/microsoft-graph-client) whose one middleware sends each request with the user's
 * access token through the outbound client's fetch (the one URL policy), at KUBECREW_MICROSOFT_GRAPH_BASE_URL when set.
 */
export function graphClient(context: ActionContext): Client {
  const send: Middleware = {
    async execute(request) {
      const headers = new Headers(request.options?.headers as ConstructorParameters<typeof Headers>[0]);
      headers.set("authorization", `Bearer ${context.accessToken}`);
      const url = typeof request.request === "string" ? request.request : request.request.url;
      request.response = await context.fetch(url, {
        ...(request.options as RequestInit),
        headers,
        ...(context.signal ? { signal: context.signal } : {}),
      });
    },
  };
  return Client.initWithMiddleware({
    middleware: send,
    ...(context.apiRoots.microsoft ? { baseUrl: context.apiRoots.microsoft.href.replace(/\/?$/, "/") } : {}),
  });
}

/** Runs one Graph call; a Graph error answer becomes a ProviderApiError with its status and message. */
export async function graph<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof GraphError && error.statusCode > 0)
      throw new ProviderApiError(error.statusCode, error.message || error.code || `HTTP ${error.statusCode}`);
    throw error;
  }
}

/** `['a@x']` → Graph's recipient list. */
export const recipients = (addresses: readonly string[] | undefined) =>
  (addresses ?? []).map((address) => ({ emailAddress: { address } }));

/** Graph path segment for a drive item id or a path under the user's OneDrive root. */
export const driveItem = (item: string) =>
  item.startsWith("/") ? `/me/drive/root:${encodeURI(item)}:` : `/me/drive/items/${encodeURIComponent(item)}`;
