import { expect, it } from "vitest";
import { TaskSlots } from "./task-slots.ts";

it("starts at most `limit` at once and hands a freed slot to the longest waiting, skipping those that gave up", () => {
  const slots = new TaskSlots(2);
  const started: string[] = [];
  const start = (name: string) => slots.whenFree(() => started.push(name));
  start("a");
  start("b");
  start("c");
  const cancelD = start("d");
  start("e");
  expect(started).toEqual(["a", "b"]);
  expect(slots.queued).toBe(3);
  cancelD();
  slots.release();
  expect(started).toEqual(["a", "b", "c"]);
  slots.release();
  expect(started).toEqual(["a", "b", "c", "e"]);
  slots.release();
  slots.release();
  start("f");
  start("g");
  start("h");
  expect(started).toEqual(["a", "b", "c", "e", "f", "g"]);
});

it("refuses a limit that is not a positive integer", () => {
  expect(() => new TaskSlots(0)).toThrow(/not a positive integer/);
  expect(() => new TaskSlots(1.5)).toThrow(/not a positive integer/);
});
