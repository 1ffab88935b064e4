import { randomUUID } from "node:crypto";
import { startProviderFixture, type Operation, type ProviderFixture } from "./fixture-server.ts";

/**
 * The Notion API (what KUBECREW_NOTION_API_BASE_URL points the SDK at): search, retrieve a page, list a block's children,
 * create a page, with the paths, the required Notion-Version header and required body fields of Notion's published API
 * reference, and pages kept in memory.
 */
export interface NotionPage {
  title: string;
  parent: string | null;
  lines: string[];
}

export interface NotionFixture extends ProviderFixture {
  pages: Map<string, NotionPage>;
}

const notionError = (status: number, message: string) => ({
  object: "error",
  status,
  code:
    status === 401
      ? "unauthorized"
      : status === 403
        ? "restricted_resource"
        : status === 404
          ? "object_not_found"
          : "validation_error",
  message,
});

const richText = (text: string) => [{ type: "text", text: { content: text }, plain_text: text }];

export async function startNotionFixture(): Promise<NotionFixture> {
  const pages = new Map<string, NotionPage>();
  const pageObject = (id: string) => {
    const page = pages.get(id)!;
    return {
      object: "page",
      id,
      url: `https://notion.example/${id.replace(/-/g, "")}`,
      parent: page.parent ? { type: "page_id", page_id: page.parent } : { type: "workspace", workspace: true },
      properties: { title: { id: "title", type: "title", title: richText(page.title) } },
    };
  };
  const version = ["notion-version"];
  const operations: Operation[] = [
    {
      id: "post-search",
      method: "POST",
      path: "/v1/search",
      requiredHeaders: version,
      answer: ({ body }) => {
        const query = String((body as { query?: string }).query ?? "");
        const found = [...pages].filter(([, p]) => p.title.includes(query)).map(([id]) => pageObject(id));
        return {
          json: { object: "list", results: found, next_cursor: null, has_more: false, type: "page_or_database" },
        };
      },
    },
    {
      id: "retrieve-a-page",
      method: "GET",
      path: "/v1/pages/{page_id}",
      requiredHeaders: version,
      answer: ({ params }) =>
        pages.has(params["page_id"]!)
          ? { json: pageObject(params["page_id"]!) }
          : { status: 404, json: notionError(404, `Could not find page with ID: ${params["page_id"]}.`) },
    },
    {
      id: "get-block-children",
      method: "GET",
      path: "/v1/blocks/{block_id}/children",
      requiredHeaders: version,
      answer: ({ params }) => {
        const page = pages.get(params["block_id"]!);
        if (!page)
          return { status: 404, json: notionError(404, `Could not find block with ID: ${params["block_id"]}.`) };
        return {
          json: {
            object: "list",
            results: page.lines.map((line) => ({
              object: "block",
              id: randomUUID(),
              type: "paragraph",
              paragraph: { rich_text: richText(line) },
            })),
            next_cursor: null,
            has_more: false,
          },
        };
      },
    },
    {
      id: "post-page",
      method: "POST",
      path: "/v1/pages",
      requiredHeaders: version,
      requiredBody: ["parent", "properties"],
      answer: ({ body }) => {
        const b = body as {
          parent: { page_id?: string };
          properties: { title?: { title?: { text: { content: string } }[] } };
          children?: { paragraph?: { rich_text: { text: { content: string } }[] } }[];
        };
        if (b.parent.page_id && !pages.has(b.parent.page_id))
          return { status: 404, json: notionError(404, `Could not find page with ID: ${b.parent.page_id}.`) };
        const id = randomUUID();
        pages.set(id, {
          title: b.properties.title?.title?.map((t) => t.text.content).join("") ?? "",
          parent: b.parent.page_id ?? null,
          lines: (b.children ?? []).map((c) => c.paragraph?.rich_text.map((t) => t.text.content).join("") ?? ""),
        });
        return { json: pageObject(id) };
      },
    },
  ];
  const fixture = await startProviderFixture(operations, notionError);
  return Object.assign(fixture, { pages });
}
