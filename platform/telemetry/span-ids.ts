import { createHash } from "node:crypto";
import { RandomIdGenerator, type IdGenerator } from "@opentelemetry/sdk-trace";

/**
 * Span ids chosen by the caller for the few spans whose id must be known before they exist: an execution's span on a
 * cluster is exported only when it finishes, by whichever controller replica writes its finished phase, yet its
 * children (Job starts, the task pods' spans) name it as their parent from the start. Every other span gets a
 * random id.
 */

const random = new RandomIdGenerator();
/**
 * The id the next span gets. A tracer asks its IdGenerator synchronously inside startSpan, and JavaScript runs one
 * call at a time, so a value set just around that call is seen by that span only. Module state because the tracer
 * provider is process-wide (OpenTelemetry's global), as the generator handed to it is.
 */
let chosen: string | undefined;

/** The tracer provider's IdGenerator: the chosen id for a span started by `startSpanWithId`, else a random one. */
export const spanIdGenerator: IdGenerator = {
  generateTraceId: () => random.generateTraceId(),
  generateSpanId: () => {
    const id = chosen ?? random.generateSpanId();
    chosen = undefined;
    return id;
  },
};

/** Starts a span (synchronously, in `start`) with the span id given: 16 lowercase hex digits, not all zero. */
export function startSpanWithId<S>(spanId: string, start: () => S): S {
  chosen = spanId;
  try {
    return start();
  } finally {
    chosen = undefined;
  }
}

/** A span id for a name, the same every time and in every process (a SHA-256 digest's first 8 bytes). */
export function spanIdFor(name: string): string {
  const id = createHash("sha256").update(name).digest("hex").slice(0, 16);
  // The all-zero id is the invalid one; a digest that starts so is as good as never, but stay valid.
  return /^0+$/.test(id) ? "0000000000000001" : id;
}
