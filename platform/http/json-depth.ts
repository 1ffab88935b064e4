import { KubecrewError } from "../../core/errors.ts";

/** The deepest nesting of objects and arrays a JSON request body may have: far beyond any real payload. */
export const MAX_JSON_DEPTH = 64;

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether raw JSON text nests deeper than `max`, found by one pass over the bytes before anything is parsed: a
 * refused body never becomes objects (schema validation of deep objects recurses until the stack overflows).
 */
export function nestsDeeperThan(text: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const byte = text[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth--;
  }
  return false;
}

/** What a body parser's `verify` hook throws for a body nested too deep (body-parser keeps `status` and `type`). */
export class BodyTooDeepError extends KubecrewError {
  readonly code = "body_too_deep";
  override name = "BodyTooDeepError";
  readonly status = 400;
  readonly statusCode = 400;
  readonly expose = true;
  readonly type = "entity.too.deep";

  constructor(max: number) {
    super(`Request body nests deeper than ${max} levels`);
  }
}

/** A `verify` hook for express.json(): refuses bodies nested deeper than MAX_JSON_DEPTH. */
export function refuseDeepJson(_req: unknown, _res: unknown, body: Uint8Array): void {
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) throw new BodyTooDeepError(MAX_JSON_DEPTH);
}
