import { describe, expect, it } from "vitest";
import {
  allowedAppActions,
  appActionFromToolName,
  appActionReferences,
  appNames,
  appReferenceSchema,
  appToolName,
  resolveAppReference,
} from "./apps.ts";

describe("app catalogue", () => {
  it("has CrewAI's app names", () => {
    expect(appNames).toEqual([
      "gmail",
      "google_calendar",
      "google_drive",
      "google_sheets",
      "google_docs",
      "microsoft_outlook",
      "microsoft_calendar",
      "microsoft_onedrive",
      "microsoft_excel",
      "microsoft_word",
      "salesforce",
      "hubspot",
      "notion",
    ]);
    expect(appActionReferences).toContain("gmail/send_email");
    expect(appActionReferences).toContain("notion/get_page");
  });

  it("resolves an app to all its actions and app/action to one; anything else to nothing", () => {
    expect(resolveAppReference("google_docs")).toEqual([
      { app: "google_docs", action: "get_document" },
      { app: "google_docs", action: "create_document" },
    ]);
    expect(resolveAppReference("gmail/send_email")).toEqual([{ app: "gmail", action: "send_email" }]);
    for (const bad of ["gmail/delete_everything", "yahoo", "gmail/send_email/x", "", "gmail/", "constructor"])
      expect(resolveAppReference(bad), bad).toBeUndefined();
  });

  it("allows each action once, whatever overlaps the references have", () => {
    expect(allowedAppActions(["gmail/send_email", "google_calendar", "gmail/send_email", "nope"])).toEqual([
      { app: "gmail", action: "send_email" },
      { app: "google_calendar", action: "list_events" },
      { app: "google_calendar", action: "create_event" },
    ]);
    expect(allowedAppActions([])).toEqual([]);
  });

  it("names tools with a double underscore (no slash: function-name rules refuse it) and reads them back", () => {
    for (const reference of appActionReferences) {
      const [action] = resolveAppReference(reference)!;
      const name = appToolName(action!);
      expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      expect(appActionFromToolName(name)).toEqual(action);
    }
    expect(appActionFromToolName("gmail__nope")).toBeUndefined();
    expect(appActionFromToolName("gmail")).toBeUndefined();
  });

  it("validates agents[].apps entries with a message listing what exists", () => {
    expect(appReferenceSchema.safeParse("hubspot/create_deal").success).toBe(true);
    const bad = appReferenceSchema.safeParse("gmail/delete_everything");
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.message).toMatch(
      /^unknown app or action "gmail\/delete_everything": an app \(gmail, /,
    );
  });
});
