import { describe, expect, it } from "vitest";
import { lastWords } from "./last-words.ts";

describe("lastWords", () => {
  it("takes the runner's plain error line from the end of a log that mixes JSON log lines in", () => {
    const log = [
      '{"level":30,"msg":"Task started"}',
      "Cannot report the outcome: 403 forbidden",
      '{"level":50,"msg":"Runner could not report the outcome","err":{"message":"403"}}',
    ].join("\n");
    expect(lastWords(log)).toBe("Cannot report the outcome: 403 forbidden");
  });

  it("falls back to the last error-level JSON line", () => {
    expect(
      lastWords(
        '{"level":30,"msg":"a"}\n{"level":50,"msg":"Runner failed","err":{"message":"boom"}}\n{"level":30,"msg":"b"}\n',
      ),
    ).toBe("Runner failed: boom");
  });
});
