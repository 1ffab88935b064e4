import { Connection } from "jsforce";
import { setDispatcher } from "jsforce/lib/request.js";
import { z } from "zod";
import { defineAction, ProviderApiError, type ActionContext } from "../app-action.ts";

/** The Salesforce REST API version the actions speak. */
const apiVersion = "62.0";

/**
 * A jsforce Connection on the user's org (the instance URL Salesforce answered at sign-in; KUBECREW_SALESFORCE_INSTANCE_URL
 * overrides it, e.g. for tests) with the user's access token. jsforce sends
 * through one process-wide undici dispatcher: it is the outbound client's checked one (the one URL policy).
 */
function salesforce(context: ActionContext): Connection {
  const instanceUrl =
    context.apiRoots.salesforce ?? (context.account.instanceUrl ? new URL(context.account.instanceUrl) : undefined);
  if (!instanceUrl) {
    throw new ProviderApiError(
      501,
      "the connection has no instance URL (connect Salesforce again) and KUBECREW_SALESFORCE_INSTANCE_URL is not set",
    );
  }
  setDispatcher(context.dispatcher);
  return new Connection({
    instanceUrl: instanceUrl.href.replace(/\/$/, ""),
    accessToken: context.accessToken,
    version: apiVersion,
  });
}

/** jsforce reports Salesforce's error code, not the HTTP status: map the codes back to what they mean. */
const statusOf = (code: string): number =>
  /^ERROR_HTTP_(\d{3})$/.exec(code)
    ? Number(/^ERROR_HTTP_(\d{3})$/.exec(code)![1])
    : code === "INVALID_SESSION_ID"
      ? 401
      : /INSUFFICIENT_ACCESS|API_DISABLED_FOR_ORG|insufficient_scope|FUNCTIONALITY_NOT_ENABLED/.test(code)
        ? 403
        : code === "NOT_FOUND"
          ? 404
          : 400;

async function sf<T>(call: () => PromiseLike<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const code = (error as { errorCode?: unknown }).errorCode;
    if (typeof code === "string" && error instanceof Error)
      throw new ProviderApiError(statusOf(code), `${code}: ${error.message}`);
    throw error;
  }
}

const sobject = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_]{0,79}$/, "an object API name, e.g. Account, Contact, Opportunity, Custom__c")
  .describe("Object API name, e.g. Account, Contact, Opportunity");
const fields = z
  .record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/), z.union([z.string(), z.number(), z.boolean(), z.null()]))
  .describe('Field API names and values, e.g. {"Name": "Acme", "Industry": "Retail"}');
const recordId = z.string().regex(/^[a-zA-Z0-9]{15}([a-zA-Z0-9]{3})?$/, "a 15 or 18 character Salesforce id");

interface SaveResult {
  id?: string;
  success: boolean;
  errors?: { message?: string; statusCode?: string }[];
}
const saved = (result: SaveResult) => {
  if (!result.success)
    throw new ProviderApiError(400, (result.errors ?? []).map((e) => `${e.statusCode}: ${e.message}`).join("; "));
  return { id: result.id, success: true };
};

export const salesforceActions = {
  query: defineAction({
    description:
      "Runs a SOQL query in the user's Salesforce org, e.g. SELECT Id, Name FROM Account WHERE Industry = 'Retail' LIMIT 10.",
    input: { soql: z.string().min(1).max(20_000).describe("The SOQL query") },
    async run(context, { soql }) {
      const answer = await sf(() => salesforce(context).query<Record<string, unknown>>(soql).execute());
      return {
        totalSize: answer.totalSize,
        done: answer.done,
        records: answer.records.map(({ attributes: _a, ...record }) => record),
      };
    },
  }),
  create_record: defineAction({
    description: "Creates a record of an object (Account, Contact, Lead, Opportunity, …) in the user's Salesforce org.",
    input: { sobject, fields },
    async run(context, { sobject, fields }) {
      return saved((await sf(() => salesforce(context).sobject(sobject).create(fields))) as SaveResult);
    },
  }),
  update_record: defineAction({
    description: "Updates fields of a record in the user's Salesforce org.",
    input: { sobject, id: recordId, fields },
    async run(context, { sobject, id, fields }) {
      return saved(
        (await sf(() =>
          salesforce(context)
            .sobject(sobject)
            .update({ ...fields, Id: id }),
        )) as SaveResult,
      );
    },
  }),
};
