import { KubecrewError } from "../errors.ts";

/**
 * JSON with comments, as CrewAI's JSON-first crew files are written (`crew.jsonc`, `agents/<name>.jsonc`): `//` and
 * `/* … *\/` comments and trailing commas before `}` or `]` are allowed; everything else is strict JSON. The test of
 * conformance parses every fixture with CrewAI's own loader as well and compares the values.
 */

export class JsoncError extends KubecrewError {
  readonly code = "invalid_jsonc";
  override name = "JsoncError";
}

/** The value a JSONC text holds. Throws JsoncError naming the line and column of the first problem. */
export function parseJsonc(text: string): unknown {
  const json = withoutCommentsAndTrailingCommas(text);
  try {
    return JSON.parse(json) as unknown;
  } catch (err) {
    throw new JsoncError(describeJsonError(json, err));
  }
}

/**
 * The text with comments and trailing commas blanked out. Each removed character becomes a space (line breaks stay), so
 * a JSON.parse error's position is the same line and column in the original text.
 */
function withoutCommentsAndTrailingCommas(text: string): string {
  const out = [...text];
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n" && out[k] !== "\r") out[k] = " ";
  };
  /** The index after a comment starting at i, or i when none starts there. */
  const afterComment = (i: number): number => {
    if (text[i] !== "/") return i;
    if (text[i + 1] === "/") {
      let j = i + 2;
      while (j < text.length && text[j] !== "\n" && text[j] !== "\r") j++;
      return j;
    }
    if (text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) throw new JsoncError(`${lineColumn(text, i)}: a /* comment is never closed`);
      return end + 2;
    }
    return i;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      i = afterString(text, i);
      continue;
    }
    const end = afterComment(i);
    if (end !== i) {
      blank(i, end);
      i = end;
      continue;
    }
    if (c === ",") {
      // A comma whose next significant character closes the object or array is dropped.
      let j = i + 1;
      for (;;) {
        while (j < text.length && /\s/.test(text[j]!)) j++;
        const k = afterComment(j);
        if (k === j) break;
        j = k;
      }
      if (text[j] === "}" || text[j] === "]") blank(i, i + 1);
    }
    i++;
  }
  return out.join("");
}

/** The index after the string literal opening at i (an unterminated one runs to the end: JSON.parse reports it). */
function afterString(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length) {
    if (text[j] === "\\") j += 2;
    else if (text[j] === '"') return j + 1;
    else j++;
  }
  return j;
}

function lineColumn(text: string, index: number): string {
  const before = text.slice(0, index);
  const line = before.split("\n").length;
  const column = index - before.lastIndexOf("\n");
  return `line ${line}, column ${column}`;
}

/** JSON.parse's message with the position as a line and column. */
function describeJsonError(json: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const position = /position (\d+)/.exec(message);
  const detail = message
    .replace(/ in JSON at position \d+.*$/s, "")
    .replace(/ \(line \d+ column \d+\)$/, "")
    .replace(/, ".*" is not valid JSON$/s, "")
    .replace(/\n/g, "\\n");
  return position ? `${lineColumn(json, Number(position[1]))}: ${detail}` : `not valid JSON: ${detail}`;
}
