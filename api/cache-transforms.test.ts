import { describe, expect, it } from "vitest";
import { ANNOTATION_IDEMPOTENCY_KEY, ANNOTATION_IDEMPOTENCY_REQUEST } from "../kube/resources.ts";
import { CrewSpecSnapshots } from "../kube/crew-spec-snapshots.ts";
import { crewForCache, executionForCache, resultForCache } from "./cache-transforms.ts";

const managedFields = [{ manager: "kubectl", operation: "Update", fieldsV1: { "f:spec": { "f:tasks": {} } } }];
const metadata = {
  name: "a",
  namespace: "team",
  uid: "u-1",
  generation: 2,
  resourceVersion: "42",
  creationTimestamp: "2026-11-23T10:00:00Z",
  labels: { "kubecrew.io/crew": "notes" },
  managedFields,
  ownerReferences: [{ apiVersion: "v1", kind: "X", name: "x", uid: "x-1" }],
  finalizers: ["f"],
};
const snapshot = () => ({ tasks: [{ name: "step1", agent: "writer" }], agents: [{ name: "writer", role: "W" }] });
const execution = (name: string, crewSpec: unknown) => ({
  apiVersion: "kubecrew.io/v1alpha1",
  kind: "CrewExecution",
  metadata: {
    ...metadata,
    name,
    annotations: {
      [ANNOTATION_IDEMPOTENCY_KEY]: "k",
      [ANNOTATION_IDEMPOTENCY_REQUEST]: "r",
      "kubectl.kubernetes.io/last-applied-configuration": "{…}",
    },
  },
  spec: { crewRef: { name: "notes" }, inputs: { topic: "tides" } },
  status: { phase: "Succeeded", crewSpec },
});

describe("the API's cache transforms", () => {
  it("keep a Crew's spec, status and schema metadata, without managedFields or kubectl's last-applied copy", () => {
    const kept = crewForCache({
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "Crew",
      metadata: {
        ...metadata,
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{…}", team: "blue" },
      },
      spec: { tasks: [] },
      status: { inputs: ["topic"] },
    });
    expect(kept).toEqual({
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "Crew",
      metadata: {
        name: "a",
        namespace: "team",
        uid: "u-1",
        generation: 2,
        resourceVersion: "42",
        creationTimestamp: "2026-11-23T10:00:00Z",
        labels: { "kubecrew.io/crew": "notes" },
        annotations: { team: "blue" },
      },
      spec: { tasks: [] },
      status: { inputs: ["topic"] },
    });
  });

  it("keep a CrewExecution's spec, status and idempotency annotations, and share equal crew snapshots", () => {
    const transform = executionForCache(new CrewSpecSnapshots());
    const a = transform(execution("a", snapshot()));
    const b = transform(execution("b", snapshot()));
    expect(a.metadata).toEqual({
      name: "a",
      namespace: "team",
      uid: "u-1",
      generation: 2,
      resourceVersion: "42",
      creationTimestamp: "2026-11-23T10:00:00Z",
      labels: { "kubecrew.io/crew": "notes" },
      annotations: { [ANNOTATION_IDEMPOTENCY_KEY]: "k", [ANNOTATION_IDEMPOTENCY_REQUEST]: "r" },
    });
    expect(a.spec).toEqual({ crewRef: { name: "notes" }, inputs: { topic: "tides" } });
    expect(a.status).toEqual({ phase: "Succeeded", crewSpec: snapshot() });
    const crewSpecOf = (o: typeof a) => (o.status as { crewSpec: unknown }).crewSpec;
    expect(crewSpecOf(b)).toBe(crewSpecOf(a));
    const edited = transform(execution("c", { ...snapshot(), tasks: [{ name: "other", agent: "writer" }] }));
    expect(crewSpecOf(edited)).not.toBe(crewSpecOf(a));
    expect(crewSpecOf(edited)).toEqual({ ...snapshot(), tasks: [{ name: "other", agent: "writer" }] });
  });

  it("leave an execution without status or snapshot as it is", () => {
    const transform = executionForCache(new CrewSpecSnapshots());
    const { status: _none, ...pending } = execution("p", undefined);
    expect(transform(pending)).not.toHaveProperty("status");
    expect(transform({ ...pending, status: { phase: "Running" } }).status).toEqual({ phase: "Running" });
  });

  it("keep a CrewTaskResult's spec and the labels its index reads", () => {
    const spec = { executionRef: { name: "a" }, taskName: "step1", output: "text", steps: [{ index: 0 }] };
    const kept = resultForCache({
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "CrewTaskResult",
      metadata: { ...metadata, labels: { "kubecrew.io/execution": "a" } },
      spec,
    });
    expect(kept.metadata?.labels).toEqual({ "kubecrew.io/execution": "a" });
    expect(kept.metadata).not.toHaveProperty("managedFields");
    expect(kept.metadata).not.toHaveProperty("ownerReferences");
    expect(kept.spec).toBe(spec);
  });

  it("bound the number of snapshots kept", () => {
    const snapshots = new CrewSpecSnapshots(2);
    const first = snapshots.shared({ v: 1 });
    snapshots.shared({ v: 2 });
    snapshots.shared({ v: 3 });
    expect(snapshots.shared({ v: 1 })).not.toBe(first);
  });
});
