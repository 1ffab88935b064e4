import { expect } from "vitest";
import type { AppName } from "../../../core/apps.ts";
import type { OidcTestProvider } from "../../support/oidc-provider.ts";
import type { FixtureRequest, ProviderFixture } from "../../support/provider-fixtures/fixture-server.ts";
import { startGoogleFixture, type GoogleFixture } from "../../support/provider-fixtures/google.ts";
import { startHubspotFixture, type HubspotFixture } from "../../support/provider-fixtures/hubspot.ts";
import { startGraphFixture, type GraphFixture } from "../../support/provider-fixtures/microsoft-graph.ts";
import { startNotionFixture, type NotionFixture } from "../../support/provider-fixtures/notion.ts";
import { startSalesforceFixture, type SalesforceFixture } from "../../support/provider-fixtures/salesforce.ts";
import { appsSigningKey } from "./apps-harness.ts";
import { clients } from "./harness.ts";

/**
 * Issue 14's whole chain, once per provider family: a user connects the app through the real sign-in flow
 * (oidc-provider standing in for the provider), a crew's agent declares one action of it, the model calls that action,
 * and the provider's API fixture must receive this request with exactly the access token the provider issued; the
 * task's result shows the provider's answer. The `kubecrew dev` and local-cluster chain tests run every row.
 */
export interface AppChain {
  family: string;
  /** What the user connects: the app at the crew API's /connections, the provider/product at the service. */
  app: AppName;
  provider: string;
  product: string;
  /** What the agent declares (`app/action`) and the model calls, with these arguments. */
  action: string;
  input: Record<string, unknown>;
  /** The provider's state before the call (e.g. the record a query finds). */
  given?: (apis: ProviderApis) => void;
  /** The one request the provider's API receives: its operation id in the published description, and what it carries. */
  receives: { api: ProviderFamily; operation: string; carrying: (request: FixtureRequest) => unknown; is: unknown };
  /** What the task's result shows of the tool's answer. */
  answers: RegExp;
  /**
   * The provider's token responses carry expires_in (Salesforce's and Notion's do not), and whether a stored token
   * that is past its lifetime is refreshed: Salesforce's are taken to last 3600 s; Notion's are never refreshed.
   */
  token: { expiresIn: boolean; refreshedWhenOld: boolean };
}

/** The RFC 5322 message Gmail received as `raw`: its To and Subject headers and its (base64) text body. */
function gmailMessage(request: FixtureRequest) {
  const message = Buffer.from(String((request.body as { raw: string }).raw), "base64url").toString("utf8");
  const [head = "", body = ""] = message.split("\r\n\r\n");
  const header = (name: string) => new RegExp(`^${name}: (.*)$`, "m").exec(head.replace(/\r/g, ""))?.[1];
  return {
    to: header("To"),
    subject: header("Subject"),
    body: Buffer.from(body.replace(/\r\n/g, ""), "base64").toString("utf8"),
  };
}

const PARENT_PAGE = "0f3c2a1b-0000-4000-8000-000000000001";
const ACCOUNT_ID = "001000000000001AAA";

export const appChains: AppChain[] = [
  {
    family: "Google",
    app: "gmail",
    provider: "google",
    product: "gmail",
    action: "gmail/send_email",
    input: { to: ["bob@example.com"], subject: "Quarterly numbers", body: "Revenue is up 12 %." },
    receives: {
      api: "google",
      operation: "gmail.users.messages.send",
      carrying: gmailMessage,
      is: { to: "bob@example.com", subject: "Quarterly numbers", body: "Revenue is up 12 %." },
    },
    answers: /"sent":\s*true/,
    token: { expiresIn: true, refreshedWhenOld: true },
  },
  {
    family: "Microsoft",
    app: "microsoft_outlook",
    provider: "microsoft",
    product: "outlook",
    action: "microsoft_outlook/send_mail",
    input: { to: ["bob@example.com"], subject: "Quarterly numbers", body: "Revenue is up 12 %." },
    receives: {
      api: "microsoft",
      operation: "user.sendMail",
      carrying: (request) => request.body,
      is: {
        message: {
          subject: "Quarterly numbers",
          body: { contentType: "Text", content: "Revenue is up 12 %." },
          toRecipients: [{ emailAddress: { address: "bob@example.com" } }],
        },
        saveToSentItems: true,
      },
    },
    answers: /"sent":\s*true/,
    token: { expiresIn: true, refreshedWhenOld: true },
  },
  {
    family: "Salesforce",
    app: "salesforce",
    provider: "salesforce",
    product: "crm",
    action: "salesforce/query",
    input: { soql: "SELECT Id, Name, Industry FROM Account" },
    given: (apis) =>
      apis.salesforce.records.set(ACCOUNT_ID, { sobject: "Account", fields: { Name: "Acme", Industry: "Retail" } }),
    receives: {
      api: "salesforce",
      operation: "query",
      carrying: (request) => request.query.get("q"),
      is: "SELECT Id, Name, Industry FROM Account",
    },
    answers: new RegExp(`"Id":\\s*"${ACCOUNT_ID}",\\s*"Name":\\s*"Acme",\\s*"Industry":\\s*"Retail"`),
    token: { expiresIn: false, refreshedWhenOld: true },
  },
  {
    family: "HubSpot",
    app: "hubspot",
    provider: "hubspot",
    product: "crm",
    action: "hubspot/create_contact",
    input: { email: "dana@acme.example", firstname: "Dana", company: "Acme" },
    receives: {
      api: "hubspot",
      operation: "post-/crm/v3/objects/contacts_create",
      carrying: (request) => request.body,
      is: { properties: { email: "dana@acme.example", firstname: "Dana", company: "Acme" }, associations: [] },
    },
    answers: /"email":\s*"dana@acme\.example"/,
    token: { expiresIn: true, refreshedWhenOld: true },
  },
  {
    family: "Notion",
    app: "notion",
    provider: "notion",
    product: "notes",
    action: "notion/create_page",
    input: { parentPageId: PARENT_PAGE, title: "Meeting notes", text: "Decided: ship Friday" },
    given: (apis) => apis.notion.pages.set(PARENT_PAGE, { title: "Team wiki", parent: null, lines: [] }),
    receives: {
      api: "notion",
      operation: "post-page",
      carrying: (request) => request.body,
      is: {
        parent: { page_id: PARENT_PAGE },
        properties: { title: { title: [{ text: { content: "Meeting notes" } }] } },
        children: [
          expect.objectContaining({
            type: "paragraph",
            paragraph: { rich_text: [{ type: "text", text: { content: "Decided: ship Friday" } }] },
          }),
        ],
      },
    },
    answers: /"url":\s*"https:\/\/notion\.example\/\w+"/,
    token: { expiresIn: false, refreshedWhenOld: false },
  },
];

/** The tool name the model calls for a chain's action. */
export const toolOf = (chain: AppChain) => chain.action.replace("/", "__");

/** The five provider API fixtures, one per family. */
export interface ProviderApis {
  google: GoogleFixture;
  microsoft: GraphFixture;
  salesforce: SalesforceFixture;
  hubspot: HubspotFixture;
  notion: NotionFixture;
}
export type ProviderFamily = keyof ProviderApis;

export async function startProviderApis(): Promise<ProviderApis & { stop(): Promise<void> }> {
  const [google, microsoft, salesforce, hubspot, notion] = await Promise.all([
    startGoogleFixture(),
    startGraphFixture(),
    startSalesforceFixture(),
    startHubspotFixture(),
    startNotionFixture(),
  ]);
  const apis = { google, microsoft, salesforce, hubspot, notion };
  return {
    ...apis,
    stop: async () => void (await Promise.all(Object.values(apis).map((api: ProviderFixture) => api.stop()))),
  };
}

/**
 * The integrations service's variables for the chains: the apps signing key, every provider's API root at its
 * fixture, and the sign-in endpoints of the providers the service does not already point at the test provider.
 */
export const providerApisEnv = (apis: ProviderApis) => (issuer: string) => ({
  KUBECREW_APPS_SIGNING_KEY: appsSigningKey,
  KUBECREW_GOOGLE_API_BASE_URL: apis.google.url,
  KUBECREW_MICROSOFT_GRAPH_BASE_URL: apis.microsoft.url,
  KUBECREW_HUBSPOT_API_BASE_URL: apis.hubspot.url,
  KUBECREW_NOTION_API_BASE_URL: apis.notion.url,
  KUBECREW_SALESFORCE_CLIENT_ID: clients.salesforce.client_id,
  KUBECREW_SALESFORCE_CLIENT_SECRET: clients.salesforce.client_secret,
  KUBECREW_SALESFORCE_AUTHORIZATION_URL: `${issuer}/auth`,
  KUBECREW_SALESFORCE_TOKEN_URL: `${issuer}/token`,
  KUBECREW_SALESFORCE_REVOCATION_URL: `${issuer}/token/revocation`,
  KUBECREW_NOTION_CLIENT_ID: clients.notion.client_id,
  KUBECREW_NOTION_CLIENT_SECRET: clients.notion.client_secret,
  KUBECREW_NOTION_AUTHORIZATION_URL: `${issuer}/auth`,
  KUBECREW_NOTION_TOKEN_URL: `${issuer}/token`,
});

/**
 * Before a chain's sign-in, the token endpoint answers as the provider's does: Salesforce adds the org's API origin (its
 * fixture) as instance_url; expires_in only where the provider sends it.
 */
export function prepareSignIn(oidc: OidcTestProvider, chain: AppChain, apis: ProviderApis): void {
  oidc.instanceUrl = chain.provider === "salesforce" ? apis.salesforce.url : undefined;
  oidc.omitExpiresIn = !chain.token.expiresIn;
}

/**
 * The chain's provider API received exactly one call of its operation since `since` requests, carrying what the row
 * says, with exactly `accessToken`, and nothing that breaks the API's published description.
 */
export function expectReceived(chain: AppChain, apis: ProviderApis, accessToken: string, since: number): void {
  const api = apis[chain.receives.api];
  const calls = api.requests.slice(since).filter((r) => r.operation === chain.receives.operation);
  expect(calls, `${chain.family}: ${chain.receives.operation} requests`).toHaveLength(1);
  expect(calls[0]!.token).toBe(accessToken);
  expect(chain.receives.carrying(calls[0]!)).toEqual(chain.receives.is);
  expect(api.violations).toEqual([]);
}

/** A crew named `apps-<family>` whose one agent declares the chain's action, on the LLM fixture. */
export function chainCrewYaml(chain: AppChain, llmBaseUrl: string, extraSpec = ""): string {
  return `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${chainCrewName(chain)} }
spec:
  llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llmBaseUrl}" }
  agents:
    - { name: assistant, role: Assistant, goal: Act for the user, apps: [${chain.action}] }
  tasks:
    - { name: act, agent: assistant, description: "Use ${chain.app} for the user", expectedOutput: Done }
  runner: { retries: 0, taskTimeoutSeconds: 90, executionTimeoutSeconds: 86400 }
${extraSpec}`;
}
export const chainCrewName = (chain: AppChain) => `apps-${chain.family.toLowerCase()}`;
