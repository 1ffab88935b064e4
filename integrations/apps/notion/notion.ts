import { APIResponseError, Client } from "@notionhq/client";
import type { ClientOptions } from "@notionhq/client/build/src/Client.js";
import { z } from "zod";
import { defineAction, ProviderApiError, type ActionContext } from "../app-action.ts";

/** The Notion SDK (@notionhq/client) with the user's token, the outbound fetch and KUBECREW_NOTION_API_BASE_URL when set. */
const notionClient = (context: ActionContext) =>
  new Client({
    auth: context.accessToken,
    fetch: context.fetch as NonNullable<ClientOptions["fetch"]>,
    ...(context.apiRoots.notion ? { baseUrl: context.apiRoots.notion.href.replace(/\/$/, "") } : {}),
    timeoutMs: 30_000,
  });

async function notion<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (APIResponseError.isAPIResponseError(error)) throw new ProviderApiError(error.status, error.message);
    throw error;
  }
}

interface RichText {
  plain_text?: string;
}
type Block = Record<string, unknown> & { type?: string; id?: string };

/** The plain text of a block: its rich_text runs (paragraphs, headings, list items, to-dos, quotes, code…). */
export function blockText(block: Block): string {
  const content = block.type ? (block[block.type] as { rich_text?: RichText[] } | undefined) : undefined;
  return (content?.rich_text ?? []).map((t) => t.plain_text ?? "").join("");
}

function pageTitle(page: { properties?: Record<string, { type?: string; title?: RichText[] }> }): string | undefined {
  const title = Object.values(page.properties ?? {}).find((p) => p.type === "title");
  return title?.title?.map((t) => t.plain_text ?? "").join("");
}

const paragraph = (text: string) => ({
  object: "block" as const,
  type: "paragraph" as const,
  paragraph: { rich_text: [{ type: "text" as const, text: { content: text.slice(0, 2000) } }] },
});

export const notionActions = {
  search: defineAction({
    description: "Searches the Notion pages and databases the user shared with this integration, by title.",
    input: {
      query: z.string().max(1000).describe("Text in the title; empty lists recently edited pages"),
      maxResults: z.number().int().min(1).max(100).default(20),
    },
    async run(context, { query, maxResults }) {
      const answer = await notion(() => notionClient(context).search({ query, page_size: maxResults }));
      return {
        results: answer.results.map((r) => ({
          id: r.id,
          object: r.object,
          title: "properties" in r ? pageTitle(r as Parameters<typeof pageTitle>[0]) : undefined,
          url: "url" in r ? r.url : undefined,
        })),
      };
    },
  }),
  get_page: defineAction({
    description: "Reads a Notion page: its title and the text of its blocks, one line per block.",
    input: { pageId: z.string().min(1).max(100).describe("The page id (from search or its URL)") },
    async run(context, { pageId }) {
      const client = notionClient(context);
      const page = await notion(() => client.pages.retrieve({ page_id: pageId }));
      const blocks = await notion(() => client.blocks.children.list({ block_id: pageId, page_size: 100 }));
      return {
        id: page.id,
        title: "properties" in page ? pageTitle(page as Parameters<typeof pageTitle>[0]) : undefined,
        url: "url" in page ? page.url : undefined,
        text: (blocks.results as Block[]).map(blockText).join("\n"),
        truncated: blocks.has_more,
      };
    },
  }),
  create_page: defineAction({
    description: "Creates a Notion page under a parent page, with a title and paragraphs of text.",
    input: {
      parentPageId: z.string().min(1).max(100).describe("The page to create it under"),
      title: z.string().min(1).max(2000),
      text: z.string().max(200_000).optional().describe("The page's text; each line becomes a paragraph"),
    },
    async run(context, { parentPageId, title, text }) {
      const lines = (text ?? "")
        .split("\n")
        .filter((line) => line.length > 0)
        .slice(0, 100);
      const page = await notion(() =>
        notionClient(context).pages.create({
          parent: { page_id: parentPageId },
          properties: { title: { title: [{ text: { content: title } }] } },
          ...(lines.length ? { children: lines.map(paragraph) } : {}),
        }),
      );
      return { id: page.id, url: "url" in page ? page.url : undefined };
    },
  }),
};
