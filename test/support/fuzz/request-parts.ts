import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import fc from "fast-check";

/** Path segments a careless client or an attacker sends: malformed and tricky %-escapes, dots, encoded slashes. */
export const hostileSegment = fc.constantFrom(
  "%",
  "%ff",
  "%zz",
  "%c3%28",
  "%e2%82",
  "%00",
  "%2f",
  "%2e%2e",
  "..",
  "a%",
  "%25",
  "__proto__",
  "constructor",
  "%F0%9F%98%80",
);

/** A path segment: a given value (valid or known), a random string %-encoded, or a hostile one sent raw. */
export const segment = (valid: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 5, arbitrary: valid.map(encodeURIComponent) },
    { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent) },
    { weight: 2, arbitrary: hostileSegment },
  );

/** JSON nested `levels` deep, as in the repro 1. */
export const deepJson = (levels: number) =>
  `{"inputs":{"topic":"x"},"meta":{"a":${'{"a":'.repeat(levels)}1${"}".repeat(levels)}}}`;

/** Bodies that are not what any route takes: any JSON, broken JSON, deep JSON, text, bytes, nothing. */
export const invalidBody = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom("{", '{"inputs":', "[", "nul", '{"a":1}}', "\u0000", "{}".repeat(3)),
  fc.integer({ min: 60, max: 5000 }).map(deepJson),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
);

export type Encoding = { name: string; encode: (body: Buffer) => Buffer } | undefined;

/** The Content-Encodings every service decodes, done right. */
export const goodEncodings: Encoding[] = [
  { name: "gzip", encode: gzipSync },
  { name: "deflate", encode: deflateSync },
  { name: "br", encode: brotliCompressSync },
];

/** Content-Encodings: none (mostly), the real ones done right, labels that lie, and ones no server knows. */
export const encoding: fc.Arbitrary<Encoding> = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  {
    weight: 4,
    arbitrary: fc.constantFrom<Encoding>(
      ...goodEncodings,
      { name: "identity", encode: (b) => b },
      { name: "gzip", encode: (b) => b }, // labelled gzip, not compressed (repro 3)
      { name: "br", encode: (b) => b },
      { name: "compress", encode: (b) => b },
      { name: "x-unknown", encode: (b) => b },
      { name: "gzip, gzip", encode: (b) => gzipSync(gzipSync(b)) },
    ),
  },
);

export const otherMethod = fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "TRACE", "OPTIONS", "HEAD");

/** A header value a client might send instead of the right one. */
export const junkHeader = fc.oneof(
  fc.constantFrom("", " ", "null", "Bearer", "Bearer ", "Basic", "Basic !!!", "Bearer a b", "x".repeat(300)),
  fc.stringMatching(/^[\x21-\x7e]{0,60}$/),
);

export const contentType = (documented: string) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant(documented) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "application/json; charset=utf-8",
        "application/json; charset=utf-16",
        "application/json; charset=latin1",
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/*",
        "nonsense",
      ),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
