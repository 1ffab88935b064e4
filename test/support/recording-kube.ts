import { KubeApiError, type KubeApi, type KubeList, type KubeObject } from "../../kube/runtime/client.ts";

/** One write as the apiserver would see it. */
export interface RecordedWrite {
  verb: "create" | "patch" | "delete" | "deletecollection";
  path: string;
  body?: unknown;
}

/**
 * A stand-in for the apiserver in unit tests of the controller's apply side: it keeps the objects written to it by
 * path, answers reads from them, applies merge patches (status patches guarded by resourceVersion as the apiserver
 * does), and records every write in order. `failNext` makes the next matching request fail with a given status.
 */
export class RecordingKube implements KubeApi {
  readonly writes: RecordedWrite[] = [];
  /** The paths read (get and list), in order. */
  readonly reads: string[] = [];
  private readonly objects = new Map<string, KubeObject>();
  private readonly failures: { verb: string; path: RegExp; status: number; reason: string }[] = [];
  private version = 100;

  /** Puts an object in place without recording a write; answers it as stored (resourceVersion set). */
  seed<T extends KubeObject>(collectionPath: string, object: T): T {
    const stored = {
      ...structuredClone(object),
      metadata: { ...object.metadata, resourceVersion: this.nextVersion() },
    };
    this.objects.set(`${collectionPath}/${object.metadata!.name}`, stored);
    return structuredClone(stored) as T;
  }

  failNext(verb: RecordedWrite["verb"] | "get" | "list", path: RegExp, status: number, reason: string): void {
    this.failures.push({ verb, path, status, reason });
  }

  /** The writes as `verb path`, in order. */
  get log(): string[] {
    return this.writes.map((w) => `${w.verb} ${w.path}`);
  }

  stored(path: string): KubeObject | undefined {
    return this.objects.get(path);
  }

  async get<T>(path: string): Promise<T> {
    this.reads.push(path);
    this.maybeFail("get", path);
    const object = this.objects.get(path);
    if (!object) throw new KubeApiError(404, "NotFound", `GET ${path}: 404`);
    return structuredClone(object) as T;
  }

  async list<T>(path: string, query: Record<string, string | undefined> = {}): Promise<KubeList<T>> {
    this.reads.push(path);
    this.maybeFail("list", path);
    const items = this.inCollection(path, query.labelSelector);
    return { metadata: { resourceVersion: String(this.version) }, items: structuredClone(items) as T[] };
  }

  async create<T>(path: string, body: T): Promise<T> {
    this.writes.push({ verb: "create", path, body: structuredClone(body) });
    this.maybeFail("create", path);
    const object = body as KubeObject;
    const key = `${path}/${object.metadata!.name}`;
    if (this.objects.has(key)) throw new KubeApiError(409, "AlreadyExists", `POST ${path}: 409`);
    const stored = {
      ...structuredClone(object),
      metadata: { ...object.metadata, resourceVersion: this.nextVersion() },
    };
    this.objects.set(key, stored);
    return structuredClone(stored) as T;
  }

  async mergePatch<T>(path: string, patch: unknown): Promise<T> {
    this.writes.push({ verb: "patch", path, body: structuredClone(patch) });
    this.maybeFail("patch", path);
    const subresource = path.endsWith("/status");
    const key = subresource ? path.slice(0, -"/status".length) : path;
    const object = this.objects.get(key);
    if (!object) throw new KubeApiError(404, "NotFound", `PATCH ${path}: 404`);
    const wanted = (patch as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    if (wanted && wanted !== object.metadata?.resourceVersion) {
      throw new KubeApiError(409, "Conflict", `PATCH ${path}: 409 the object has been modified`);
    }
    const { metadata, ...rest } = patch as { metadata?: Record<string, unknown> } & Record<string, unknown>;
    const { resourceVersion: _ignored, ...metadataPatch } = metadata ?? {};
    const next = mergePatch(object, subresource ? { status: rest.status } : { ...rest, metadata: metadataPatch });
    (next as KubeObject).metadata = { ...(next as KubeObject).metadata, resourceVersion: this.nextVersion() };
    this.objects.set(key, next as KubeObject);
    return structuredClone(next) as T;
  }

  async delete(path: string, options: Parameters<KubeApi["delete"]>[1] = {}): Promise<unknown> {
    this.writes.push({ verb: "delete", path, body: options });
    this.maybeFail("delete", path);
    if (!this.objects.delete(path)) throw new KubeApiError(404, "NotFound", `DELETE ${path}: 404`);
    return {};
  }

  async deleteCollection(path: string, labelSelector: string, propagationPolicy?: string): Promise<unknown> {
    this.writes.push({ verb: "deletecollection", path, body: { labelSelector, propagationPolicy } });
    this.maybeFail("deletecollection", path);
    for (const object of this.inCollection(path, labelSelector)) {
      this.objects.delete(`${path}/${object.metadata!.name}`);
    }
    return {};
  }

  /** The informers are never started in unit tests: their caches are filled by hand (upsert). */
  async watch(): Promise<void> {
    throw new Error("RecordingKube does not watch");
  }

  private inCollection(path: string, labelSelector: string | undefined): KubeObject[] {
    const [label, value] = (labelSelector ?? "").split("=");
    return [...this.objects.entries()]
      .filter(([key]) => key.startsWith(`${path}/`) && !key.slice(path.length + 1).includes("/"))
      .map(([, o]) => o)
      .filter(
        (o) =>
          !label || (value === undefined ? label in (o.metadata?.labels ?? {}) : o.metadata?.labels?.[label] === value),
      );
  }

  private maybeFail(verb: string, path: string): void {
    const i = this.failures.findIndex((f) => f.verb === verb && f.path.test(path));
    if (i < 0) return;
    const [f] = this.failures.splice(i, 1);
    throw new KubeApiError(f!.status, f!.reason, `${verb} ${path}: ${f!.status}`);
  }

  private nextVersion(): string {
    return String(++this.version);
  }
}

/** RFC 7386: objects merged key by key, null removes, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (value !== undefined) result[key] = mergePatch(result[key], value);
  }
  return result;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
