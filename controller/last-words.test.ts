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

  it("takes the error-level JSON line when the window starts with a cut line and the plain line fell out of it", () => {
    // What a kind node's containerd left: stderr's plain line written before stdout's JSON lines, out of the 2 KiB.
    const log = [
      'el":30,"msg":"Task succeeded","executionTime":0.024}',
      '{"level":50,"msg":"Cannot report the outcome: HTTP 403 forbidden","err":{"message":"HTTP 403 forbidden"}}',
    ].join("\n");
    expect(lastWords(log)).toBe("Cannot report the outcome: HTTP 403 forbidden");
  });

  it("takes a lone plain line at the start of the window over the info lines after it", () => {
    expect(lastWords('Cannot read the assignment: ENOENT\n{"level":30,"msg":"bye"}\n')).toBe(
      "Cannot read the assignment: ENOENT",
    );
  });
});
