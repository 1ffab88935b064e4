/**
 * Strict field validation as the apiserver does it for a custom resource (`kubectl apply --validate=strict`): every
 * field of an object must be declared by the CRD's structural schema (or sit under a node that preserves unknown
 * fields), and `metadata` may hold only ObjectMeta's fields. Answers each unknown field's path, in the apiserver's
 * notation (`spec.agents[0].rol`), in document order.
 */

/** A node of a CRD's openAPIV3Schema, as far as field names go. */
export interface StructuralSchema {
  type?: string;
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema | boolean;
  items?: StructuralSchema;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
}

/** The fields of metav1.ObjectMeta: the apiserver checks `metadata` against them whatever the CRD says. */
const OBJECT_META_FIELDS = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
]);

export function unknownFields(object: unknown, schema: StructuralSchema): string[] {
  const found: string[] = [];
  if (!isObject(object)) return found;
  for (const [key, value] of Object.entries(object)) {
    if (key === "metadata" && isObject(value)) {
      for (const field of Object.keys(value)) if (!OBJECT_META_FIELDS.has(field)) found.push(`metadata.${field}`);
    } else if (key !== "metadata") {
      walk(value, childSchema(schema, key), key, found);
    }
  }
  return found;
}

function walk(value: unknown, schema: StructuralSchema | undefined | null, path: string, found: string[]): void {
  if (schema === null) {
    found.push(path);
    return;
  }
  if (!schema || schema["x-kubernetes-preserve-unknown-fields"]) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => walk(item, schema.items, `${path}[${i}]`, found));
  } else if (isObject(value) && (schema.type === "object" || schema.properties || schema.additionalProperties)) {
    for (const [key, child] of Object.entries(value)) walk(child, childSchema(schema, key), `${path}.${key}`, found);
  }
}

/** The schema of a field, undefined when anything goes there, null when the field is unknown. */
function childSchema(schema: StructuralSchema, key: string): StructuralSchema | undefined | null {
  const declared = schema.properties?.[key];
  if (declared) return declared;
  if (schema.additionalProperties === true) return undefined;
  if (schema.additionalProperties) return schema.additionalProperties;
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
