import type { AppAction, AppActionName, AppName } from "../../core/apps.ts";
import type { AppActionDefinition } from "./app-action.ts";
import { gmailActions } from "./google/gmail.ts";
import { googleCalendarActions } from "./google/google-calendar.ts";
import { googleDocsActions } from "./google/google-docs.ts";
import { googleDriveActions } from "./google/google-drive.ts";
import { googleSheetsActions } from "./google/google-sheets.ts";
import { microsoftCalendarActions } from "./microsoft/microsoft-calendar.ts";
import { microsoftExcelActions, microsoftOnedriveActions, microsoftWordActions } from "./microsoft/microsoft-files.ts";
import { microsoftOutlookActions } from "./microsoft/microsoft-outlook.ts";
import { hubspotActions } from "./hubspot/hubspot.ts";
import { notionActions } from "./notion/notion.ts";
import { salesforceActions } from "./salesforce/salesforce.ts";

type ActionsOf<A extends AppName> = { [K in AppActionName<A>]: AppActionDefinition };

/**
 * What each app's actions do, by the names of core/apps.ts: an app listed here has every one of its catalogue actions
 * (the type says so).
 */
export const appActions: { [A in AppName]: ActionsOf<A> } = {
  gmail: gmailActions,
  google_calendar: googleCalendarActions,
  google_drive: googleDriveActions,
  google_sheets: googleSheetsActions,
  google_docs: googleDocsActions,
  microsoft_outlook: microsoftOutlookActions,
  microsoft_calendar: microsoftCalendarActions,
  microsoft_onedrive: microsoftOnedriveActions,
  microsoft_excel: microsoftExcelActions,
  microsoft_word: microsoftWordActions,
  salesforce: salesforceActions,
  hubspot: hubspotActions,
  notion: notionActions,
};

export function appActionDefinition({ app, action }: AppAction): AppActionDefinition | undefined {
  const actions = appActions[app] as Record<string, AppActionDefinition> | undefined;
  return actions && Object.hasOwn(actions, action) ? actions[action] : undefined;
}
