import { resourceName } from "../crew.ts";

/**
 * A crew's name as Kubernetes takes it (a DNS-1123 label) from a CrewAI crew's name, project folder or file stem:
 * lowercase, `_`, spaces and other characters as `-`. Undefined when nothing usable is left.
 */
export function crewName(source: string): string | undefined {
  const name = source
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/-+/g, "-")
    .slice(0, 63)
    .replace(/^-+|-+$/g, "");
  return resourceName.safeParse(name).success ? name : undefined;
}
