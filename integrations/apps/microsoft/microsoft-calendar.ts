import { z } from "zod";
import { defineAction } from "../app-action.ts";
import { graph, graphClient } from "./graph-api.ts";

interface GraphEvent {
  id: string;
  subject?: string;
  start?: { dateTime?: string; timeZone?: string };
  end?: { dateTime?: string; timeZone?: string };
  location?: { displayName?: string };
  attendees?: { emailAddress?: { address?: string } }[];
  webLink?: string;
}

const localTime = z.iso.datetime({ local: true }).describe("Local date and time in timeZone, e.g. 2026-05-04T09:00:00");

export const microsoftCalendarActions = {
  list_events: defineAction({
    description:
      "Lists the events of the user's Outlook calendar between two times (ISO 8601 with offset, e.g. 2026-05-01T00:00:00Z), recurring events expanded.",
    input: {
      start: z.iso.datetime({ offset: true }).describe("From"),
      end: z.iso.datetime({ offset: true }).describe("To"),
      maxResults: z.number().int().min(1).max(100).default(25),
    },
    async run(context, { start, end, maxResults }) {
      const answer = await graph<{ value: GraphEvent[] }>(() =>
        graphClient(context)
          .api("/me/calendarView")
          .query({ startDateTime: start, endDateTime: end })
          .top(maxResults)
          .select(["id", "subject", "start", "end", "location", "attendees", "webLink"])
          .get(),
      );
      return {
        events: answer.value.map((e) => ({
          id: e.id,
          subject: e.subject,
          start: e.start,
          end: e.end,
          location: e.location?.displayName,
          attendees: e.attendees?.map((a) => a.emailAddress?.address),
          link: e.webLink,
        })),
      };
    },
  }),
  create_event: defineAction({
    description:
      "Creates an event in the user's Outlook calendar (local times in a time zone, UTC by default), optionally inviting attendees.",
    input: {
      subject: z.string().min(1).max(1024),
      start: localTime,
      end: localTime,
      timeZone: z.string().min(1).max(100).default("UTC").describe("IANA or Windows time zone name"),
      body: z.string().max(8000).optional(),
      location: z.string().max(1024).optional(),
      attendees: z.array(z.email()).max(100).optional(),
    },
    async run(context, { subject, start, end, timeZone, body, location, attendees }) {
      const event = await graph<GraphEvent>(() =>
        graphClient(context)
          .api("/me/events")
          .post({
            subject,
            start: { dateTime: start, timeZone },
            end: { dateTime: end, timeZone },
            ...(body ? { body: { contentType: "Text", content: body } } : {}),
            ...(location ? { location: { displayName: location } } : {}),
            ...(attendees
              ? { attendees: attendees.map((address) => ({ emailAddress: { address }, type: "required" })) }
              : {}),
          }),
      );
      return { id: event.id, link: event.webLink, start: event.start, end: event.end };
    },
  }),
};
