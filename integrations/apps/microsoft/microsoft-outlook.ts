import { z } from "zod";
import { defineAction } from "../app-action.ts";
import { graph, graphClient, recipients } from "./graph-api.ts";

interface GraphMessage {
  id: string;
  subject?: string;
  from?: { emailAddress?: { address?: string; name?: string } };
  toRecipients?: { emailAddress?: { address?: string } }[];
  receivedDateTime?: string;
  bodyPreview?: string;
  isRead?: boolean;
}

export const microsoftOutlookActions = {
  list_messages: defineAction({
    description:
      "Lists the user's Outlook messages in a folder (inbox by default), newest first, optionally matching a search text, with sender, recipients, subject, time and a preview.",
    input: {
      query: z.string().max(1000).optional().describe("Search text (Outlook $search)"),
      folder: z.string().min(1).max(256).default("inbox").describe("Folder id or well-known name (inbox, sentitems)"),
      maxResults: z.number().int().min(1).max(50).default(10),
    },
    async run(context, { query, folder, maxResults }) {
      let request = graphClient(context)
        .api(`/me/mailFolders/${encodeURIComponent(folder)}/messages`)
        .top(maxResults)
        .select(["id", "subject", "from", "toRecipients", "receivedDateTime", "bodyPreview", "isRead"]);
      // Graph refuses $orderby together with $search; search results come by relevance.
      request = query ? request.search(`"${query.replace(/"/g, "")}"`) : request.orderby("receivedDateTime desc");
      const answer = await graph<{ value: GraphMessage[] }>(() => request.get());
      return {
        messages: answer.value.map((m) => ({
          id: m.id,
          subject: m.subject,
          from: m.from?.emailAddress?.address,
          to: m.toRecipients?.map((r) => r.emailAddress?.address),
          received: m.receivedDateTime,
          preview: m.bodyPreview,
          isRead: m.isRead,
        })),
      };
    },
  }),
  send_mail: defineAction({
    description: "Sends a plain-text email from the user's Outlook account (kept in Sent Items).",
    input: {
      to: z.array(z.email()).min(1).describe("Recipient addresses"),
      cc: z.array(z.email()).optional(),
      subject: z.string().max(998).describe("Subject line"),
      body: z.string().max(1_000_000).describe("Plain-text body"),
    },
    async run(context, { to, cc, subject, body }) {
      await graph(() =>
        graphClient(context)
          .api("/me/sendMail")
          .post({
            message: {
              subject,
              body: { contentType: "Text", content: body },
              toRecipients: recipients(to),
              ...(cc?.length ? { ccRecipients: recipients(cc) } : {}),
            },
            saveToSentItems: true,
          }),
      );
      return { sent: true };
    },
  }),
};
