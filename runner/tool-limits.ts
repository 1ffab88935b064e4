/**
 * Bounds on what passes between the model and its tools: a tool call's input is refused above MAX_TOOL_INPUT_BYTES
 * (the model gets the refusal as the tool's result), and a tool's output is cut for the model at
 * MAX_TOOL_OUTPUT_CHARS with a marker saying how much was left out.
 */
export const MAX_TOOL_INPUT_BYTES = 64 * 1024;
export const MAX_TOOL_OUTPUT_CHARS = 32 * 1024;
/** http_request reads at most this much of a response body (the rest is never downloaded). */
export const MAX_HTTP_BODY_BYTES = 256 * 1024;
/** The most tools one task is offered (a model's context has room for a few hundred schemas at most). */
export const MAX_TASK_TOOLS = 200;

/** `text`, cut at `max` characters with a marker naming the full length, so the model knows it saw a part. */
export function truncateForModel(text: string, max = MAX_TOOL_OUTPUT_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[truncated: showing the first ${max} of ${text.length} characters]`;
}

/** The JSON size of a tool input, in bytes. */
export function inputBytes(input: unknown): number {
  return Buffer.byteLength(JSON.stringify(input ?? null), "utf8");
}
