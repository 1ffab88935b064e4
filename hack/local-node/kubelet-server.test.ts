import { expect, test } from "vitest";
import { tailLines } from "./kubelet-server.ts";

test("tailLines keeps the last lines and the final newline", () => {
  expect(tailLines("a\nb\nc\n", 2)).toBe("b\nc\n");
  expect(tailLines("a\nb\nc", 1)).toBe("c");
  expect(tailLines("a\nb\n", -1)).toBe("a\nb\n");
  expect(tailLines("a\nb\n", 0)).toBe("");
});
