import { ResponseType } from "@microsoft/microsoft-graph-client";
import JSZip from "jszip";
import { z } from "zod";
import { defineAction } from "../app-action.ts";
import { driveItem, graph, graphClient } from "./graph-api.ts";

const item = z
  .string()
  .min(1)
  .max(1024)
  .describe("A drive item id (from search_files), or a path under the OneDrive root starting with /");

/** The most text one answer carries; a longer file is cut there and says so. */
const maxText = 100_000;
const cut = (text: string) =>
  text.length > maxText ? { text: text.slice(0, maxText), truncated: true } : { text, truncated: false };

interface DriveItem {
  id: string;
  name?: string;
  size?: number;
  webUrl?: string;
  lastModifiedDateTime?: string;
  file?: { mimeType?: string };
  folder?: object;
}
const itemSummary = (i: DriveItem) => ({
  id: i.id,
  name: i.name,
  mimeType: i.file?.mimeType,
  folder: i.folder !== undefined,
  size: i.size,
  modified: i.lastModifiedDateTime,
  link: i.webUrl,
});

const isText = (mimeType: string | undefined) =>
  !!mimeType && (mimeType.startsWith("text/") || /^application\/(json|xml|csv|x-yaml|yaml)/.test(mimeType));

/** The text of a .docx: its paragraphs (w:p) of text runs (w:t), tabs and breaks, from word/document.xml. */
export async function docxText(bytes: ArrayBuffer): Promise<string> {
  const zip = await JSZip.loadAsync(bytes);
  const xml = await zip.file("word/document.xml")?.async("string");
  if (xml === undefined) throw new Error("not a Word document");
  const unescape = (s: string) =>
    s.replace(
      /&(lt|gt|quot|apos|amp);/g,
      (_m, e: string) => ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" })[e]!,
    );
  return [...xml.matchAll(/<w:p[ >][\s\S]*?<\/w:p>/g)]
    .map(([p]) =>
      [...p.matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>|<w:tab\/>|<w:br\/>/g)]
        .map((m) => (m[0] === "<w:tab/>" ? "\t" : m[0] === "<w:br/>" ? "\n" : unescape(m[1]!)))
        .join(""),
    )
    .join("\n");
}

const worksheetRange = (itemId: string, worksheet: string, address: string) =>
  `${driveItem(itemId)}/workbook/worksheets/${encodeURIComponent(worksheet)}/range(address='${address.replace(/'/g, "''")}')`;

const cellValues = z
  .array(z.array(z.union([z.string(), z.number(), z.boolean(), z.null()])))
  .min(1)
  .max(10_000)
  .describe("Rows of cell values; formulas start with =");

export const microsoftOnedriveActions = {
  search_files: defineAction({
    description: "Searches the user's OneDrive (and files shared with them) by name and content.",
    input: { query: z.string().min(1).max(1000), maxResults: z.number().int().min(1).max(100).default(20) },
    async run(context, { query, maxResults }) {
      const answer = await graph<{ value: DriveItem[] }>(() =>
        graphClient(context)
          .api(`/me/drive/root/search(q='${query.replace(/'/g, "''")}')`)
          .top(maxResults)
          .get(),
      );
      return { files: answer.value.map(itemSummary) };
    },
  }),
  get_file: defineAction({
    description: "Reads a OneDrive text file (text, CSV, JSON, …); other files answer their metadata only.",
    input: { item },
    async run(context, { item }) {
      const client = graphClient(context);
      const meta = await graph<DriveItem>(() => client.api(driveItem(item)).get());
      if (!isText(meta.file?.mimeType)) return { ...itemSummary(meta), text: null, note: "not a text file" };
      const text = await graph<string>(() =>
        client
          .api(`${driveItem(item)}/content`)
          .responseType(ResponseType.TEXT)
          .get(),
      );
      return { ...itemSummary(meta), ...cut(text) };
    },
  }),
};

export const microsoftExcelActions = {
  get_range: defineAction({
    description: "Reads the values of a range (e.g. A1:C10) of a worksheet of an Excel workbook in OneDrive.",
    input: {
      item,
      worksheet: z.string().min(1).max(256).describe("Worksheet name"),
      address: z.string().min(1).max(256),
    },
    async run(context, { item, worksheet, address }) {
      const range = await graph<{ address?: string; values?: unknown[][] }>(() =>
        graphClient(context)
          .api(worksheetRange(item, worksheet, address))
          .get(),
      );
      return { address: range.address, values: range.values ?? [] };
    },
  }),
  update_range: defineAction({
    description:
      "Writes values into a range of a worksheet of an Excel workbook in OneDrive; the rows and columns must match the range's size.",
    input: {
      item,
      worksheet: z.string().min(1).max(256),
      address: z.string().min(1).max(256),
      values: cellValues,
    },
    async run(context, { item, worksheet, address, values }) {
      const range = await graph<{ address?: string; values?: unknown[][] }>(() =>
        graphClient(context)
          .api(worksheetRange(item, worksheet, address))
          .patch({ values }),
      );
      return { address: range.address, values: range.values };
    },
  }),
};

export const microsoftWordActions = {
  get_document: defineAction({
    description: "Reads the text of a Word document (.docx) in OneDrive, paragraph by paragraph.",
    input: { item },
    async run(context, { item }) {
      const client = graphClient(context);
      const meta = await graph<DriveItem>(() => client.api(driveItem(item)).get());
      const bytes = await graph<ArrayBuffer>(() =>
        client
          .api(`${driveItem(item)}/content`)
          .responseType(ResponseType.ARRAYBUFFER)
          .get(),
      );
      return { ...itemSummary(meta), ...cut(await docxText(bytes)) };
    },
  }),
};
