import { docs, type docs_v1 } from "@googleapis/docs";
import { z } from "zod";
import { defineAction, type ActionContext } from "../app-action.ts";
import { google, googleOptions } from "./google-api.ts";

const api = (context: ActionContext) => docs({ version: "v1", ...googleOptions(context) });

/** The text of a document: its paragraphs' text runs, tables cell by cell, in order. */
export function documentText(content: docs_v1.Schema$StructuralElement[] | undefined): string {
  let text = "";
  for (const element of content ?? []) {
    for (const part of element.paragraph?.elements ?? []) text += part.textRun?.content ?? "";
    for (const row of element.table?.tableRows ?? [])
      for (const cell of row.tableCells ?? []) text += documentText(cell.content);
  }
  return text;
}

export const googleDocsActions = {
  get_document: defineAction({
    description: "Reads a Google Docs document's title and text.",
    input: { documentId: z.string().min(1).max(256).describe("The document id (from its URL)") },
    async run(context, { documentId }) {
      const doc = await google(() => api(context).documents.get({ documentId }));
      return { documentId: doc.documentId, title: doc.title, text: documentText(doc.body?.content) };
    },
  }),
  create_document: defineAction({
    description: "Creates a Google Docs document with a title and, optionally, its text.",
    input: {
      title: z.string().min(1).max(1024),
      text: z.string().max(1_000_000).optional().describe("The document's text"),
    },
    async run(context, { title, text }) {
      const documents = api(context).documents;
      const doc = await google(() => documents.create({ requestBody: { title } }));
      if (text) {
        await google(() =>
          documents.batchUpdate({
            documentId: doc.documentId!,
            requestBody: { requests: [{ insertText: { location: { index: 1 }, text } }] },
          }),
        );
      }
      return { documentId: doc.documentId, title: doc.title };
    },
  }),
};
