import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import JSZip from "jszip";
import { startProviderFixture, type Operation, type ProviderFixture } from "./fixture-server.ts";

/**
 * Microsoft Graph v1.0 (what KUBECREW_MICROSOFT_GRAPH_BASE_URL points the Graph client at): the operations the apps use,
 * transcribed from Graph's published v1.0 OpenAPI description (paths, methods, required query parameters such as
 * calendarView's startDateTime/endDateTime, required body parts), with in-memory state. A drive item's content is a
 * 302 to a pre-authenticated URL on another origin, as Graph answers it.
 */
export interface GraphFixture extends ProviderFixture {
  sentMail: { token: string | undefined; message: Record<string, unknown> }[];
  inbox: { id: string; subject: string; from: string; bodyPreview: string }[];
  events: Record<string, unknown>[];
  items: Map<string, { name: string; mimeType: string; content: Buffer }>;
  /** Worksheet ranges by `<item>/<worksheet>/<address>`. */
  ranges: Map<string, unknown[][]>;
  /** Requests at the download host file content is redirected to, with the Authorization header they carried. */
  downloads: { item: string; authorization: string | undefined }[];
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

/** The download host Graph redirects file content to (another origin); records what each download request carried. */
async function startDownloadHost(items: GraphFixture["items"]) {
  const requests: GraphFixture["downloads"] = [];
  const server = createServer((req, res) => {
    const id = decodeURIComponent(/^\/download\/([^?]+)/.exec(req.url ?? "")?.[1] ?? "");
    requests.push({ item: id, authorization: req.headers.authorization });
    const item = items.get(id);
    if (!item) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": item.mimeType }).end(item.content);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function startGraphFixture(): Promise<GraphFixture> {
  const sentMail: GraphFixture["sentMail"] = [];
  const inbox: GraphFixture["inbox"] = [];
  const events: Record<string, unknown>[] = [];
  const items = new Map<string, { name: string; mimeType: string; content: Buffer }>();
  const ranges = new Map<string, unknown[][]>();
  const download = await startDownloadHost(items);
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
      // As Graph does: 302 to a short-lived pre-authenticated URL on another host, which needs no token.
      answer: ({ params }) =>
        items.has(params["id"]!)
          ? {
              status: 302,
              headers: { location: `${download.url}/download/${encodeURIComponent(params["id"]!)}?tempauth=t` },
            }
          : missing(params["id"]!),
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
  const stopApi = fixture.stop;
  return Object.assign(fixture, {
    sentMail,
    inbox,
    events,
    items,
    ranges,
    downloads: download.requests,
    stop: async () => {
      await stopApi();
      await download.stop();
    },
  });
}
