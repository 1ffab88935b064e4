import { HttpError } from "../platform/http/http-error.ts";

/**
 * A failure the user or caller should be told about: an HTTP status, a short error type and a clear message.
 * API routes answer `{error, message}`; browser routes render the same as a page. Anything else is a 500 without details.
 */
export class IntegrationError extends HttpError {
  override name = "IntegrationError";

  constructor(status: number, type: string, message: string, headers: Record<string, string> = {}) {
    super(status, type, message, { headers });
  }

  /** The short error type (the body's `error`). */
  get type(): string {
    return this.body.error;
  }
}

export const badRequest = (message: string) => new IntegrationError(400, "Bad Request", message);
export const invalidState = (message: string) => new IntegrationError(400, "Invalid state", message);
export const notFound = (type: string, message: string) => new IntegrationError(404, type, message);
export const forbidden = (message: string) => new IntegrationError(403, "Forbidden", message);

export function providerNotConfigured(provider: string, product?: string): IntegrationError {
  return notFound(
    "Provider not configured",
    product
      ? `No client credentials are configured for ${provider} ${product}; set KUBECREW_${provider.toUpperCase()}_CLIENT_ID and KUBECREW_${provider.toUpperCase()}_CLIENT_SECRET (or the KUBECREW_${provider.toUpperCase()}_${product.toUpperCase()}_ pair)`
      : `Unknown or unconfigured provider: ${provider}`,
  );
}
