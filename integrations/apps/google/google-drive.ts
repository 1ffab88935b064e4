import { drive } from "@googleapis/drive";
import { z } from "zod";
import { defineAction, type ActionContext } from "../app-action.ts";
import { google, googleOptions } from "./google-api.ts";

const api = (context: ActionContext) => drive({ version: "v3", ...googleOptions(context) });

/** Google's own formats have no bytes to download; they are exported as text instead. */
const exportAs: Record<string, string> = {
  "application/vnd.google-apps.document": "text/plain",
  "application/vnd.google-apps.spreadsheet": "text/csv",
  "application/vnd.google-apps.presentation": "text/plain",
};
const isText = (mimeType: string) =>
  mimeType.startsWith("text/") || /^application\/(json|xml|csv|javascript|x-yaml|yaml)/.test(mimeType);

/** The most text one answer carries; a longer file is cut there and says so. */
export const maxFileText = 100_000;

const quoted = (text: string) => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

export const googleDriveActions = {
  search_files: defineAction({
    description:
      "Searches the user's Google Drive for files whose name or content contains a text; answers ids, names, types and links.",
    input: {
      query: z.string().min(1).max(1000).describe("Text to look for in file names and contents"),
      maxResults: z.number().int().min(1).max(100).default(20),
    },
    async run(context, { query, maxResults }) {
      const list = await google(() =>
        api(context).files.list({
          q: `(name contains ${quoted(query)} or fullText contains ${quoted(query)}) and trashed = false`,
          pageSize: maxResults,
          fields: "files(id,name,mimeType,modifiedTime,webViewLink)",
        }),
      );
      return { files: list.files ?? [] };
    },
  }),
  get_file: defineAction({
    description:
      "Reads a Google Drive file's text: Docs and Slides as plain text, Sheets as CSV, text files as they are. Binary files answer their metadata only.",
    input: { fileId: z.string().min(1).max(256).describe("The file id (from search_files)") },
    async run(context, { fileId }) {
      const files = api(context).files;
      const meta = await google(() => files.get({ fileId, fields: "id,name,mimeType,size,webViewLink" }));
      const mimeType = meta.mimeType ?? "application/octet-stream";
      let text: string | undefined;
      if (exportAs[mimeType]) {
        text = await google(() =>
          files.export({ fileId, mimeType: exportAs[mimeType]! }, { responseType: "text" }),
        ).then(String);
      } else if (isText(mimeType)) {
        text = await google(() => files.get({ fileId, alt: "media" }, { responseType: "text" })).then(String);
      }
      if (text === undefined) return { ...meta, text: null, note: "binary file: no text to read" };
      const truncated = text.length > maxFileText;
      return { ...meta, text: truncated ? text.slice(0, maxFileText) : text, truncated };
    },
  }),
  upload_file: defineAction({
    description: "Uploads a text file to the user's Google Drive (optionally into a folder); answers its id and link.",
    input: {
      name: z.string().min(1).max(1024).describe("File name"),
      content: z.string().max(5_000_000).describe("The file's text"),
      mimeType: z
        .string()
        .regex(/^[\w.+-]+\/[\w.+-]+$/)
        .default("text/plain"),
      folderId: z.string().min(1).max(256).optional().describe("The folder to put it in; the Drive root otherwise"),
    },
    async run(context, { name, content, mimeType, folderId }) {
      const file = await google(() =>
        api(context).files.create(
          {
            requestBody: { name, ...(folderId ? { parents: [folderId] } : {}) },
            media: { mimeType, body: content },
            fields: "id,name,mimeType,webViewLink",
          },
          // The upload URL is built from the per-call rootUrl only (the SDK ignores the client's for media uploads).
          context.apiRoots.google ? { rootUrl: context.apiRoots.google.href } : {},
        ),
      );
      return file;
    },
  }),
};
