import { Client } from "@hubspot/api-client";
import { z } from "zod";
import { createCheckedNodeAgent } from "../../../platform/outbound/node-agent.ts";
import { defineAction, ProviderApiError, type ActionContext } from "../app-action.ts";

/**
 * The HubSpot client (@hubspot/api-client) with the user's token at KUBECREW_HUBSPOT_API_BASE_URL when set. It takes no fetch,
 * only a Node agent: one that applies the outbound policy to every connection.
 */
function hubspot(context: ActionContext): Client {
  const basePath = context.apiRoots.hubspot?.href.replace(/\/$/, "");
  const protocol = basePath?.startsWith("http:") ? "http:" : "https:";
  return new Client({
    accessToken: context.accessToken,
    ...(basePath ? { basePath } : {}),
    httpAgent: createCheckedNodeAgent(context.outboundPolicy, protocol),
    numberOfApiCallRetries: 0,
  });
}

async function hs<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "number" && code >= 400) {
      const body = (error as { body?: { message?: unknown } }).body;
      throw new ProviderApiError(code, typeof body?.message === "string" ? body.message : `HTTP ${code}`);
    }
    throw error;
  }
}

const contactProperties = ["email", "firstname", "lastname", "company", "phone"];
const dealProperties = ["dealname", "amount", "dealstage", "pipeline", "closedate"];
const search = {
  query: z.string().max(3000).describe("Text to look for (names, email, company; deal names)"),
  maxResults: z.number().int().min(1).max(100).default(10),
};
const records = (results: { id: string; properties: Record<string, string | null> }[]) =>
  results.map((r) => ({ id: r.id, ...r.properties }));
const defined = (values: Record<string, string | number | undefined>) =>
  Object.fromEntries(
    Object.entries(values)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, String(v)]),
  );

export const hubspotActions = {
  search_contacts: defineAction({
    description: "Searches the user's HubSpot contacts by text (name, email, company).",
    input: search,
    async run(context, { query, maxResults }) {
      const answer = await hs(() =>
        hubspot(context).crm.contacts.searchApi.doSearch({ query, limit: maxResults, properties: contactProperties }),
      );
      return { total: answer.total, contacts: records(answer.results) };
    },
  }),
  create_contact: defineAction({
    description: "Creates a contact in the user's HubSpot CRM.",
    input: {
      email: z.email(),
      firstname: z.string().max(256).optional(),
      lastname: z.string().max(256).optional(),
      company: z.string().max(256).optional(),
      phone: z.string().max(64).optional(),
    },
    async run(context, properties) {
      const contact = await hs(() =>
        hubspot(context).crm.contacts.basicApi.create({ properties: defined(properties), associations: [] }),
      );
      return { id: contact.id, ...contact.properties };
    },
  }),
  search_deals: defineAction({
    description: "Searches the user's HubSpot deals by text (deal name).",
    input: search,
    async run(context, { query, maxResults }) {
      const answer = await hs(() =>
        hubspot(context).crm.deals.searchApi.doSearch({ query, limit: maxResults, properties: dealProperties }),
      );
      return { total: answer.total, deals: records(answer.results) };
    },
  }),
  create_deal: defineAction({
    description: "Creates a deal in the user's HubSpot CRM.",
    input: {
      dealname: z.string().min(1).max(512),
      amount: z.number().min(0).optional(),
      dealstage: z.string().max(128).optional().describe("Stage id, e.g. appointmentscheduled"),
      pipeline: z.string().max(128).optional().describe("Pipeline id, e.g. default"),
      closedate: z.iso.datetime({ offset: true }).optional(),
    },
    async run(context, properties) {
      const deal = await hs(() =>
        hubspot(context).crm.deals.basicApi.create({ properties: defined(properties), associations: [] }),
      );
      return { id: deal.id, ...deal.properties };
    },
  }),
};
