import { KubecrewError } from "../../core/errors.ts";

/** The documented error body of every kubecrew HTTP service: `{error, message, details?}`. */
export interface HttpErrorBody {
  error: string;
  message: string;
  details?: unknown;
}

/**
 * A failure the caller is told about: an HTTP status, the documented body and any headers (Allow, Retry-After,
 * WWW-Authenticate). The one error mapper (platform/http/error-mapper.ts) answers it as it is; each service's errors
 * are subclasses of it.
 */
export class HttpError extends KubecrewError {
  override name = "HttpError";
  /** `http_<status>`: an HttpError is known by its status and documented body. */
  readonly code: string;
  readonly status: number;
  readonly body: HttpErrorBody;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    error: string,
    message: string,
    options: { details?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.code = `http_${status}`;
    this.status = status;
    this.body = options.details === undefined ? { error, message } : { error, message, details: options.details };
    this.headers = options.headers ?? {};
  }
}
