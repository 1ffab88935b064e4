import { gmail } from "@googleapis/gmail";
import { z } from "zod";
import { defineAction, type ActionContext } from "../app-action.ts";
import { google, googleOptions } from "./google-api.ts";
import { headerValue, messageText, rawMessage } from "./gmail-message.ts";

const api = (context: ActionContext) => gmail({ version: "v1", ...googleOptions(context) });

const noLineBreaks = z.string().regex(/^[^\r\n]*$/, "must be one line");
const mail = {
  to: z.array(z.email()).min(1).describe("Recipient addresses"),
  cc: z.array(z.email()).optional().describe("Copy recipients"),
  bcc: z.array(z.email()).optional().describe("Blind copy recipients"),
  subject: noLineBreaks.max(998).describe("Subject line"),
  body: z.string().max(1_000_000).describe("Plain-text body"),
};

export const gmailActions = {
  fetch_emails: defineAction({
    description:
      "Lists the user's Gmail messages matching a Gmail search query (e.g. `from:bob is:unread newer_than:7d`), newest first, with sender, recipients, subject, date and a snippet. Use get_email for a message's full text.",
    input: {
      query: z.string().max(2000).optional().describe("Gmail search query; empty lists the newest messages"),
      maxResults: z.number().int().min(1).max(50).default(10).describe("How many messages (1–50)"),
    },
    async run(context, { query, maxResults }) {
      const gm = api(context);
      const list = await google(() =>
        gm.users.messages.list({ userId: "me", maxResults, ...(query ? { q: query } : {}) }),
      );
      const messages = await Promise.all(
        (list.messages ?? []).map((m) =>
          google(() =>
            gm.users.messages.get({
              userId: "me",
              id: m.id!,
              format: "metadata",
              metadataHeaders: ["From", "To", "Subject", "Date"],
            }),
          ),
        ),
      );
      return {
        messages: messages.map((m) => ({
          id: m.id,
          threadId: m.threadId,
          from: headerValue(m.payload?.headers, "From"),
          to: headerValue(m.payload?.headers, "To"),
          subject: headerValue(m.payload?.headers, "Subject"),
          date: headerValue(m.payload?.headers, "Date"),
          snippet: m.snippet,
        })),
      };
    },
  }),
  get_email: defineAction({
    description: "Reads one Gmail message by its id (from fetch_emails): headers, labels and its plain-text body.",
    input: { id: z.string().min(1).max(256).describe("The message id") },
    async run(context, { id }) {
      const m = await google(() => api(context).users.messages.get({ userId: "me", id, format: "full" }));
      return {
        id: m.id,
        threadId: m.threadId,
        labelIds: m.labelIds,
        from: headerValue(m.payload?.headers, "From"),
        to: headerValue(m.payload?.headers, "To"),
        cc: headerValue(m.payload?.headers, "Cc"),
        subject: headerValue(m.payload?.headers, "Subject"),
        date: headerValue(m.payload?.headers, "Date"),
        body: messageText(m.payload),
      };
    },
  }),
  send_email: defineAction({
    description: "Sends a plain-text email from the user's Gmail account.",
    input: mail,
    async run(context, input) {
      const sent = await google(() =>
        api(context).users.messages.send({ userId: "me", requestBody: { raw: rawMessage(input) } }),
      );
      return { sent: true, id: sent.id, threadId: sent.threadId };
    },
  }),
  create_draft: defineAction({
    description: "Saves a plain-text email as a draft in the user's Gmail account, without sending it.",
    input: mail,
    async run(context, input) {
      const draft = await google(() =>
        api(context).users.drafts.create({ userId: "me", requestBody: { message: { raw: rawMessage(input) } } }),
      );
      return { draftId: draft.id, messageId: draft.message?.id };
    },
  }),
};
