import { startProviderFixture, type Operation, type ProviderFixture } from "./fixture-server.ts";

/**
 * HubSpot's CRM v3 objects API for contacts and deals (what KUBECREW_HUBSPOT_API_BASE_URL points the client at): create and
 * search, with the paths, required `properties` and error body (`{status, message, category}`) of HubSpot's published
 * CRM API description; objects in memory.
 */
export interface HubspotFixture extends ProviderFixture {
  objects: { contacts: Map<string, Record<string, string>>; deals: Map<string, Record<string, string>> };
}

const hubspotError = (status: number, message: string) => ({
  status: "error",
  message,
  category: status === 403 ? "MISSING_SCOPES" : status === 404 ? "OBJECT_NOT_FOUND" : "VALIDATION_ERROR",
  correlationId: "00000000-0000-4000-8000-000000000000",
});

export async function startHubspotFixture(): Promise<HubspotFixture> {
  const objects = {
    contacts: new Map<string, Record<string, string>>(),
    deals: new Map<string, Record<string, string>>(),
  };
  let next = 1000;
  const at = new Date().toISOString();
  const shape = (id: string, properties: Record<string, string>) => ({
    id,
    properties,
    createdAt: at,
    updatedAt: at,
    archived: false,
  });
  const operations: Operation[] = (["contacts", "deals"] as const).flatMap((type): Operation[] => [
    {
      id: `post-/crm/v3/objects/${type}_create`,
      method: "POST",
      path: `/crm/v3/objects/${type}`,
      requiredBody: ["properties"],
      answer: ({ body }) => {
        const id = String(next++);
        objects[type].set(id, (body as { properties: Record<string, string> }).properties);
        return { status: 201, json: shape(id, objects[type].get(id)!) };
      },
    },
    {
      id: `post-/crm/v3/objects/${type}/search_doSearch`,
      method: "POST",
      path: `/crm/v3/objects/${type}/search`,
      answer: ({ body }) => {
        const { query = "", limit = 10 } = body as { query?: string; limit?: number };
        const found = [...objects[type]].filter(([, p]) => Object.values(p).some((v) => String(v).includes(query)));
        return { json: { total: found.length, results: found.slice(0, limit).map(([id, p]) => shape(id, p)) } };
      },
    },
  ]);
  const fixture = await startProviderFixture(operations, hubspotError);
  return Object.assign(fixture, { objects });
}
