import { describe, expect, it } from "vitest";
import { JsoncError, parseJsonc } from "./jsonc.ts";

describe("parseJsonc", () => {
  it("reads line and block comments and trailing commas, and leaves comment-like text in strings alone", () => {
    const text = `{
      // a line comment
      "a": "http://x//y", /* a block
      comment */ "b": [1, 2, /* c */ ],
      "c": "say \\"/* hi */\\"",
      "d": { "e": null, // trailing comma next
      },
    }`;
    expect(parseJsonc(text)).toEqual({ a: "http://x//y", b: [1, 2], c: 'say "/* hi */"', d: { e: null } });
  });

  it("says where the text stops being JSON, by line and column of the original text", () => {
    expect(() => parseJsonc(`{\n  // note\n  "a": 1\n  "b": 2\n}`)).toThrow(/^line 4, column 3: /);
    expect(() => parseJsonc(`{"a": 1 /* open`)).toThrow(
      new JsoncError("line 1, column 9: a /* comment is never closed"),
    );
    expect(() => parseJsonc(`{"a": 1,,}`)).toThrow(JsoncError);
    expect(() => parseJsonc(``)).toThrow(/not valid JSON/);
  });

  it("keeps a comma that separates values (only one before a closing bracket goes)", () => {
    expect(parseJsonc(`[1, // one\n 2,\n]`)).toEqual([1, 2]);
    expect(() => parseJsonc(`[1 2]`)).toThrow(JsoncError);
  });
});
