import { z } from "zod";

/**
 * Connected apps, by CrewAI's names: each app is one product of a provider in the integrations service's registry
 * (`integrations/providers.ts`, checked against this list by integrations/apps.test.ts) and has named actions. An agent
 * declares `apps: ["gmail", "google_calendar/list_events"]`: a whole app (all its actions) or one `app/action`.
 * Only the names live here (the crew schema validates against them); what each action does lives in integrations/.
 */
export const appCatalogue = {
  gmail: { provider: "google", product: "gmail", actions: ["fetch_emails", "get_email", "send_email", "create_draft"] },
  google_calendar: { provider: "google", product: "calendar", actions: ["list_events", "create_event"] },
  google_drive: { provider: "google", product: "drive", actions: ["search_files", "get_file", "upload_file"] },
  google_sheets: { provider: "google", product: "sheets", actions: ["get_values", "append_values", "update_values"] },
  google_docs: { provider: "google", product: "docs", actions: ["get_document", "create_document"] },
  microsoft_outlook: { provider: "microsoft", product: "outlook", actions: ["list_messages", "send_mail"] },
  microsoft_calendar: { provider: "microsoft", product: "calendar", actions: ["list_events", "create_event"] },
  microsoft_onedrive: { provider: "microsoft", product: "onedrive", actions: ["search_files", "get_file"] },
  microsoft_excel: { provider: "microsoft", product: "excel", actions: ["get_range", "update_range"] },
  microsoft_word: { provider: "microsoft", product: "word", actions: ["get_document"] },
  salesforce: { provider: "salesforce", product: "crm", actions: ["query", "create_record", "update_record"] },
  hubspot: {
    provider: "hubspot",
    product: "crm",
    actions: ["search_contacts", "create_contact", "search_deals", "create_deal"],
  },
  notion: { provider: "notion", product: "notes", actions: ["search", "get_page", "create_page"] },
} as const satisfies Record<string, { provider: string; product: string; actions: readonly string[] }>;

export type AppName = keyof typeof appCatalogue;
export type AppActionName<A extends AppName = AppName> = (typeof appCatalogue)[A]["actions"][number];

export const appNames = Object.keys(appCatalogue) as AppName[];

/** One action of one app. */
export interface AppAction {
  app: AppName;
  action: string;
}

export function isAppName(name: string): name is AppName {
  return Object.hasOwn(appCatalogue, name);
}

/** Every `app/action` name, e.g. `gmail/send_email`. */
export const appActionReferences: readonly string[] = appNames.flatMap((app) =>
  appCatalogue[app].actions.map((action) => `${app}/${action}`),
);

/** `gmail` → every Gmail action; `gmail/send_email` → that one; anything else → undefined. */
export function resolveAppReference(reference: string): AppAction[] | undefined {
  const [app, action, ...rest] = reference.split("/");
  if (rest.length > 0 || app === undefined || !isAppName(app)) return undefined;
  const actions: readonly string[] = appCatalogue[app].actions;
  if (action === undefined) return actions.map((a) => ({ app, action: a }));
  return actions.includes(action) ? [{ app, action }] : undefined;
}

/** The actions a list of references allows, each once, in catalogue order. Unknown references allow nothing. */
export function allowedAppActions(references: readonly string[]): AppAction[] {
  const allowed = new Set(references.flatMap((ref) => resolveAppReference(ref) ?? []).map(appActionKey));
  return appNames.flatMap((app) =>
    appCatalogue[app].actions.filter((action) => allowed.has(`${app}/${action}`)).map((action) => ({ app, action })),
  );
}

const appActionKey = ({ app, action }: AppAction) => `${app}/${action}`;

/**
 * The MCP tool name of an action: `gmail__send_email`. Not `gmail/send_email`: model providers' function-name rules
 * (`^[a-zA-Z0-9_-]{1,64}$`) refuse the slash.
 */
export function appToolName({ app, action }: AppAction): string {
  return `${app}__${action}`;
}

/** `gmail__send_email` → the action, or undefined when it names none. */
export function appActionFromToolName(toolName: string): AppAction | undefined {
  const [app, action, ...rest] = toolName.split("__");
  if (rest.length > 0 || app === undefined || action === undefined) return undefined;
  return resolveAppReference(`${app}/${action}`)?.[0];
}

/** An entry of `agents[].apps`: an app name or `app/action`, with a message listing what exists when it is neither. */
export const appReferenceSchema = z.string().refine((reference) => resolveAppReference(reference) !== undefined, {
  error: (issue) =>
    `unknown app or action ${JSON.stringify(issue.input)}: an app (${appNames.join(", ")}) or one of its actions as app/action, e.g. gmail/send_email`,
});
