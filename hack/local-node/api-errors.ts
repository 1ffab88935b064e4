import { ApiException } from "@kubernetes/client-node";

/** The apiserver answered 404: the object is not there (any more). */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiException && error.code === 404;
}

/** The apiserver answered 409: a precondition (the uid, a resourceVersion) did not hold, or the object exists. */
export function isConflict(error: unknown): boolean {
  return error instanceof ApiException && error.code === 409;
}
