import { describe, expect, it } from "vitest";
import { defaultLocalThreads } from "./local-llama.ts";

describe("defaultLocalThreads", () => {
  it("is half the cores, at least one: a model never asks for every core of a machine doing other work", () => {
    expect([1, 2, 3, 4, 8, 64].map((cores) => defaultLocalThreads(cores))).toEqual([1, 1, 1, 2, 4, 32]);
  });
});
