import { calendar } from "@googleapis/calendar";
import { z } from "zod";
import { defineAction, type ActionContext } from "../app-action.ts";
import { google, googleOptions } from "./google-api.ts";

const api = (context: ActionContext) => calendar({ version: "v3", ...googleOptions(context) });
const calendarId = z.string().min(1).max(512).default("primary").describe("Calendar id; `primary` is the user's own");

interface EventTime {
  dateTime?: string | null;
  date?: string | null;
  timeZone?: string | null;
}
const when = (t: EventTime | undefined) => t?.dateTime ?? t?.date ?? undefined;

export const googleCalendarActions = {
  list_events: defineAction({
    description:
      "Lists events of the user's Google Calendar between two times (RFC 3339, e.g. 2026-05-01T00:00:00Z), in start order, optionally matching a text.",
    input: {
      calendarId,
      timeMin: z.iso.datetime({ offset: true }).optional().describe("Events ending after this time"),
      timeMax: z.iso.datetime({ offset: true }).optional().describe("Events starting before this time"),
      query: z.string().max(1000).optional().describe("Free text the events must match"),
      maxResults: z.number().int().min(1).max(250).default(25),
    },
    async run(context, { calendarId, timeMin, timeMax, query, maxResults }) {
      const list = await google(() =>
        api(context).events.list({
          calendarId,
          singleEvents: true,
          orderBy: "startTime",
          maxResults,
          ...(timeMin ? { timeMin } : {}),
          ...(timeMax ? { timeMax } : {}),
          ...(query ? { q: query } : {}),
        }),
      );
      return {
        events: (list.items ?? []).map((e) => ({
          id: e.id,
          summary: e.summary,
          start: when(e.start),
          end: when(e.end),
          location: e.location,
          attendees: e.attendees?.map((a) => a.email),
          link: e.htmlLink,
        })),
      };
    },
  }),
  create_event: defineAction({
    description: "Creates an event in the user's Google Calendar (times in RFC 3339), optionally inviting attendees.",
    input: {
      calendarId,
      summary: z.string().min(1).max(1024).describe("Title"),
      start: z.iso.datetime({ offset: true }).describe("Start, e.g. 2026-05-04T09:00:00+02:00"),
      end: z.iso.datetime({ offset: true }).describe("End"),
      description: z.string().max(8000).optional(),
      location: z.string().max(1024).optional(),
      attendees: z.array(z.email()).max(100).optional().describe("Addresses to invite"),
    },
    async run(context, { calendarId, summary, start, end, description, location, attendees }) {
      const event = await google(() =>
        api(context).events.insert({
          calendarId,
          requestBody: {
            summary,
            start: { dateTime: start },
            end: { dateTime: end },
            ...(description ? { description } : {}),
            ...(location ? { location } : {}),
            ...(attendees ? { attendees: attendees.map((email) => ({ email })) } : {}),
          },
        }),
      );
      return { id: event.id, link: event.htmlLink, start: when(event.start), end: when(event.end) };
    },
  }),
};
