import { randomBytes } from "node:crypto";
import { startProviderFixture, type Operation, type ProviderFixture } from "./fixture-server.ts";

/**
 * The Salesforce REST API of one org's instance (what KUBECREW_SALESFORCE_INSTANCE_URL points jsforce at): query, create and
 * update an sObject record, with the paths, required `q` parameter and error body (`[{message, errorCode}]`) of
 * Salesforce's REST API reference. Records kept in memory; `query` understands `SELECT <fields> FROM <object>`.
 */
export interface SalesforceFixture extends ProviderFixture {
  records: Map<string, { sobject: string; fields: Record<string, unknown> }>;
}

const salesforceError = (status: number, message: string) => [
  {
    message,
    errorCode:
      status === 401
        ? "INVALID_SESSION_ID"
        : status === 403
          ? "INSUFFICIENT_ACCESS"
          : status === 404
            ? "NOT_FOUND"
            : "MALFORMED_QUERY",
  },
];

export async function startSalesforceFixture(version = "62.0"): Promise<SalesforceFixture> {
  const records = new Map<string, { sobject: string; fields: Record<string, unknown> }>();
  const base = `/services/data/v${version}`;
  const operations: Operation[] = [
    {
      id: "query",
      method: "GET",
      path: `${base}/query`,
      requiredQuery: ["q"],
      answer: ({ query }) => {
        const match = /^SELECT\s+(.+?)\s+FROM\s+(\w+)/i.exec(query.get("q")!);
        if (!match) return { status: 400, json: salesforceError(400, "unexpected token") };
        const names = match[1]!.split(",").map((f) => f.trim());
        const found = [...records].filter(([, r]) => r.sobject === match[2]);
        return {
          json: {
            totalSize: found.length,
            done: true,
            records: found.map(([id, r]) => ({
              attributes: { type: r.sobject, url: `${base}/sobjects/${r.sobject}/${id}` },
              ...Object.fromEntries(names.map((n) => [n, n === "Id" ? id : (r.fields[n] ?? null)])),
            })),
          },
        };
      },
    },
    {
      id: "sObject Create",
      method: "POST",
      path: `${base}/sobjects/{sobject}`,
      answer: ({ params, body }) => {
        const id = `001${randomBytes(8).toString("hex").slice(0, 15)}`;
        records.set(id, { sobject: params["sobject"]!, fields: body as Record<string, unknown> });
        return { status: 201, json: { id, success: true, errors: [] } };
      },
    },
    {
      id: "sObject Rows Update",
      method: "PATCH",
      path: `${base}/sobjects/{sobject}/{id}`,
      answer: ({ params, body }) => {
        const record = records.get(params["id"]!);
        if (!record || record.sobject !== params["sobject"])
          return { status: 404, json: salesforceError(404, "The requested resource does not exist") };
        Object.assign(record.fields, body as Record<string, unknown>);
        return { status: 204, text: "" };
      },
    },
  ];
  const fixture = await startProviderFixture(operations, salesforceError);
  return Object.assign(fixture, { records });
}
