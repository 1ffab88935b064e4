import { randomUUID } from "node:crypto";
import JSZip from "jszip";
import { startProviderFixture, type Operation, type ProviderFixture } from "./fixture-server.ts";

/**
 * Microsoft Graph v1.0 (what MICROSOFT_GRAPH_BASE_URL points the Graph client at): the operations the apps use,
 * transcribed from Graph's published v1.0 OpenAPI description (paths, methods, required query parameters such as
 * calendarView's startDateTime/endDateTime, required body parts), with in-memory state.
 */
export interface GraphFixture extends ProviderFixture {
  sentMail: { token: string | undefined; message: Record<string, unknown> }[];
  inbox: { id: string; subject: string; from: string; bodyPreview: string }[];
  events: Record<string, unknown>[];
  items: Map<string, { name: string; mimeType: string; content: Buffer }>;
  /** Worksheet ranges by `<item>/<worksheet>/<address>`. */
  ranges: Map<string, unknown[][]>;
}

const graphError = (status: number, message: string) => ({
  error: {
    code: status === 403 ? "ErrorAccessDenied" : status === 404 ? "itemNotFound" : "BadRequest",
    message,
  },
});

/** A minimal .docx (the parts Word needs to open it) with one paragraph per line. */
export async function docx(lines: string[]): Promise<Buffer> {
  const zip = new JSZip();
  const w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  zip.file(
    "[Content_Types].xml",
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  );
  const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const body = lines.map((line) => `<w:p><w:r><w:t xml:space="preserve">${escape(line)}</w:t></w:r></w:p>`).join("");
  zip.file("word/document.xml", `<?xml version="1.0"?><w:document ${w}><w:body>${body}</w:body></w:document>`);
  return zip.generateAsync({ type: "nodebuffer" });
}

export async function startGraphFixture(): Promise<GraphFixture> {
  const sentMail: GraphFixture["sentMail"] = [];
  const inbox: GraphFixture["inbox"] = [];
  const events: Record<string, unknown>[] = [];
  const items = new Map<string, { name: string; mimeType: string; content: Buffer }>();
  const ranges = new Map<string, unknown[][]>();
  const summary = (id: string) => {
    const i = items.get(id)!;
    return {
      id,
      name: i.name,
      size: i.content.length,
      file: { mimeType: i.mimeType },
      webUrl: `https://onedrive.example/${id}`,
    };
  };
  const missing = (id: string) => ({ status: 404, json: graphError(404, `Item not found: ${id}`) });

  const operations: Operation[] = [
    {
      id: "user.mailFolders.ListMessages",
      method: "GET",
      path: "/v1.0/me/mailFolders/{folder}/messages",
      answer: ({ query }) => {
        if (query.has("$search") && query.has("$orderby"))
          return {
            status: 400,
            json: graphError(400, "The query parameter '$orderBy' is not supported with '$search'."),
          };
        const text = (query.get("$search") ?? "").replace(/"/g, "");
        return {
          json: {
            value: inbox
              .filter((m) => !text || `${m.subject} ${m.bodyPreview}`.includes(text))
              .map((m) => ({
                id: m.id,
                subject: m.subject,
                from: { emailAddress: { address: m.from } },
                bodyPreview: m.bodyPreview,
              })),
          },
        };
      },
    },
    {
      id: "user.sendMail",
      method: "POST",
      path: "/v1.0/me/sendMail",
      requiredBody: ["message", "message.toRecipients"],
      answer: ({ token, body }) => {
        sentMail.push({ token, message: (body as { message: Record<string, unknown> }).message });
        return { status: 202, text: "" };
      },
    },
    {
      id: "user.ListCalendarView",
      method: "GET",
      path: "/v1.0/me/calendarView",
      requiredQuery: ["startDateTime", "endDateTime"],
      answer: () => ({ json: { value: events } }),
    },
    {
      id: "user.CreateEvents",
      method: "POST",
      path: "/v1.0/me/events",
      requiredBody: ["start.dateTime", "start.timeZone", "end.dateTime", "end.timeZone"],
      answer: ({ body }) => {
        const event = { ...(body as object), id: randomUUID(), webLink: "https://outlook.example/event" };
        events.push(event);
        return { status: 201, json: event };
      },
    },
    {
      id: "drive.root.search",
      method: "GET",
      path: "/v1.0/me/drive/root/search(q='{q}')",
      answer: ({ params }) => ({
        json: { value: [...items].filter(([, i]) => i.name.includes(params["q"]!)).map(([id]) => summary(id)) },
      }),
    },
    {
      id: "drive.items.GetDriveItem",
      method: "GET",
      path: "/v1.0/me/drive/items/{id}",
      answer: ({ params }) => (items.has(params["id"]!) ? { json: summary(params["id"]!) } : missing(params["id"]!)),
    },
    {
      id: "drive.items.GetContent",
      method: "GET",
      path: "/v1.0/me/drive/items/{id}/content",
      answer: ({ params }) => {
        const item = items.get(params["id"]!);
        return item ? { bytes: item.content, contentType: item.mimeType } : missing(params["id"]!);
      },
    },
    {
      id: "workbook.worksheets.range.get",
      method: "GET",
      path: "/v1.0/me/drive/items/{id}/workbook/worksheets/{worksheet}/range(address='{address}')",
      answer: ({ params }) => ({
        json: {
          address: `${params["worksheet"]}!${params["address"]}`,
          values: ranges.get(`${params["id"]}/${params["worksheet"]}/${params["address"]}`) ?? [[]],
        },
      }),
    },
    {
      id: "workbook.worksheets.range.update",
      method: "PATCH",
      path: "/v1.0/me/drive/items/{id}/workbook/worksheets/{worksheet}/range(address='{address}')",
      requiredBody: ["values"],
      answer: ({ params, body }) => {
        const values = (body as { values: unknown[][] }).values;
        ranges.set(`${params["id"]}/${params["worksheet"]}/${params["address"]}`, values);
        return { json: { address: `${params["worksheet"]}!${params["address"]}`, values } };
      },
    },
  ];
  const fixture = await startProviderFixture(operations, graphError);
  return Object.assign(fixture, { sentMail, inbox, events, items, ranges });
}
