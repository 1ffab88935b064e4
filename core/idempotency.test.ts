import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  idempotencyKeyHash,
  idempotentExecutionId,
  judgeRecorded,
  parseIdempotencyKey,
  requestHash,
} from "./idempotency.ts";

describe("parseIdempotencyKey", () => {
  it("takes a bare key or a Structured Field string, and no header at all", () => {
    expect(parseIdempotencyKey(undefined)).toEqual({});
    expect(parseIdempotencyKey("8e03978e-40d5-43e8-bc93-6894a57f9324")).toEqual({
      key: "8e03978e-40d5-43e8-bc93-6894a57f9324",
    });
    expect(parseIdempotencyKey('"order-17"')).toEqual({ key: "order-17" });
    expect(parseIdempotencyKey('"a\\"b\\\\c"')).toEqual({ key: 'a"b\\c' });
    expect(parseIdempotencyKey("x".repeat(255))).toEqual({ key: "x".repeat(255) });
  });

  it("refuses empty, long, spaced, non-ASCII, doubled and badly quoted keys with a reason", () => {
    for (const bad of ["", '""', "x".repeat(256), "a b", "a, b", "clé", '"a", "b"', '"a\\b"', "tab\there"]) {
      expect(parseIdempotencyKey(bad), bad).toHaveProperty("problem");
    }
  });
});

describe("keys and requests", () => {
  it("scopes a key to the crew and the caller", () => {
    const alice = { crew: "research", kind: "user", subject: "alice" };
    const hash = idempotencyKeyHash(alice, "k");
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(idempotencyKeyHash(alice, "k")).toBe(hash);
    expect(idempotencyKeyHash({ ...alice, subject: "bob" }, "k")).not.toBe(hash);
    expect(idempotencyKeyHash({ ...alice, crew: "other" }, "k")).not.toBe(hash);
    expect(idempotencyKeyHash({ ...alice, kind: "org" }, "k")).not.toBe(hash);
    expect(idempotencyKeyHash(alice, "K")).not.toBe(hash);
  });

  it("hashes a body the same whatever its key order, and differently when a value differs", () => {
    const a = requestHash({ inputs: { topic: "tides", n: 1 }, meta: { x: [1, { b: 2, a: 1 }] } });
    expect(requestHash({ meta: { x: [1, { a: 1, b: 2 }] }, inputs: { n: 1, topic: "tides" } })).toBe(a);
    expect(requestHash({ inputs: { topic: "tides", n: 2 }, meta: { x: [1, { b: 2, a: 1 }] } })).not.toBe(a);
    expect(requestHash({ inputs: { topic: "tides", n: 1 }, meta: { x: [{ b: 2, a: 1 }, 1] } })).not.toBe(a);
  });

  it("derives one UUID per key and generation, a valid kickoff_id", () => {
    const hash = idempotencyKeyHash({ crew: "c", kind: "org", subject: "s" }, "k");
    const first = idempotentExecutionId(hash, 0);
    expect(z.uuid().safeParse(first).success).toBe(true);
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(idempotentExecutionId(hash, 0)).toBe(first);
    expect(idempotentExecutionId(hash, 1)).not.toBe(first);
  });
});

describe("judgeRecorded", () => {
  const request = { keyHash: "k1", requestHash: "r1" };
  const createdAt = new Date("2026-11-23T10:00:00Z");
  const at = (iso: string) => new Date(iso);

  it("replays the same body, refuses another body, and frees the key after 24 hours", () => {
    const recorded = { ...request, createdAt };
    expect(judgeRecorded(recorded, request, at("2026-11-24T09:59:59Z"))).toBe("replay");
    expect(judgeRecorded(recorded, { ...request, requestHash: "r2" }, at("2026-11-23T10:00:01Z"))).toBe("reused");
    expect(judgeRecorded(recorded, request, at("2026-11-24T10:00:00Z"))).toBe("expired");
  });

  it("does not take a run recorded under another key (or none) for this key's", () => {
    expect(judgeRecorded(undefined, request, createdAt)).toBe("foreign");
    expect(judgeRecorded({ keyHash: "k2", requestHash: "r1", createdAt }, request, createdAt)).toBe("foreign");
  });
});
