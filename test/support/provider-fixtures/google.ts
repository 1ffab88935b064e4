import { randomUUID } from "node:crypto";
import { startProviderFixture, type FixtureRequest, type Operation, type ProviderFixture } from "./fixture-server.ts";

/**
 * Gmail, Calendar, Drive, Sheets and Docs under one root (what KUBECREW_GOOGLE_API_BASE_URL points every SDK at). The
 * operations, paths and required parts are transcribed from Google's discovery documents (gmail v1, calendar v3,
 * drive v3, sheets v4, docs v1); the answers are the documented resource shapes, kept in memory.
 */
export interface SentMail {
  token: string | undefined;
  /** The decoded RFC 5322 message. */
  message: string;
}

export interface GoogleFixture extends ProviderFixture {
  sent: SentMail[];
  drafts: SentMail[];
  events: Record<string, unknown>[];
  files: Map<string, { name: string; mimeType: string; content: string }>;
  sheets: Map<string, unknown[][]>;
  documents: Map<string, { title: string; text: string }>;
  inbox: { id: string; from: string; to: string; subject: string; date: string; body: string }[];
}

const googleError = (status: number, message: string) => ({
  error: {
    code: status,
    message,
    status: status === 403 ? "PERMISSION_DENIED" : status === 404 ? "NOT_FOUND" : "INVALID_ARGUMENT",
  },
});

function mailOf(request: FixtureRequest, raw: unknown): SentMail {
  return { token: request.token, message: Buffer.from(String(raw), "base64url").toString("utf8") };
}

/** A multipart/related upload: the JSON metadata part and the media part. */
function multipart(request: FixtureRequest): { metadata: Record<string, unknown>; media: string } | undefined {
  const boundary = /boundary=([^;]+)/.exec(String(request.headers["content-type"]))?.[1]?.replace(/"/g, "");
  if (!boundary) return undefined;
  const parts = request.rawBody
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((part) => part.replace(/^\r\n/, "").split("\r\n\r\n"));
  if (parts.length !== 2) return undefined;
  const content = (p: string[]) => p.slice(1).join("\r\n\r\n").replace(/\r\n$/, "");
  return { metadata: JSON.parse(content(parts[0]!)) as Record<string, unknown>, media: content(parts[1]!) };
}

export async function startGoogleFixture(): Promise<GoogleFixture> {
  const sent: SentMail[] = [];
  const drafts: SentMail[] = [];
  const events: Record<string, unknown>[] = [];
  const files = new Map<string, { name: string; mimeType: string; content: string }>();
  const sheets = new Map<string, unknown[][]>();
  const documents = new Map<string, { title: string; text: string }>();
  const inbox: GoogleFixture["inbox"] = [];
  const header = (name: string, value: string) => ({ name, value });

  const operations: Operation[] = [
    {
      id: "gmail.users.messages.list",
      method: "GET",
      path: "/gmail/v1/users/{userId}/messages",
      answer: ({ query }) => {
        const q = query.get("q") ?? "";
        const found = inbox.filter((m) => !q || `${m.from} ${m.subject} ${m.body}`.includes(q.replace(/^from:/, "")));
        return {
          json: {
            messages: found.slice(0, Number(query.get("maxResults") ?? 100)).map((m) => ({ id: m.id, threadId: m.id })),
            resultSizeEstimate: found.length,
          },
        };
      },
    },
    {
      id: "gmail.users.messages.get",
      method: "GET",
      path: "/gmail/v1/users/{userId}/messages/{id}",
      answer: ({ params, query }) => {
        const m = inbox.find((x) => x.id === params["id"]);
        if (!m) return { status: 404, json: googleError(404, "Requested entity was not found.") };
        const headers = [
          header("From", m.from),
          header("To", m.to),
          header("Subject", m.subject),
          header("Date", m.date),
        ];
        const full = query.get("format") === "full";
        return {
          json: {
            id: m.id,
            threadId: m.id,
            labelIds: ["INBOX"],
            snippet: m.body.slice(0, 100),
            payload: full
              ? {
                  mimeType: "multipart/alternative",
                  headers,
                  parts: [{ mimeType: "text/plain", body: { data: Buffer.from(m.body).toString("base64url") } }],
                }
              : { headers },
          },
        };
      },
    },
    {
      id: "gmail.users.messages.send",
      method: "POST",
      path: "/gmail/v1/users/{userId}/messages/send",
      requiredBody: ["raw"],
      answer: (request) => {
        sent.push(mailOf(request, (request.body as { raw: string }).raw));
        return { json: { id: randomUUID(), threadId: randomUUID(), labelIds: ["SENT"] } };
      },
    },
    {
      id: "gmail.users.drafts.create",
      method: "POST",
      path: "/gmail/v1/users/{userId}/drafts",
      requiredBody: ["message.raw"],
      answer: (request) => {
        drafts.push(mailOf(request, (request.body as { message: { raw: string } }).message.raw));
        return { json: { id: randomUUID(), message: { id: randomUUID(), labelIds: ["DRAFT"] } } };
      },
    },
    {
      id: "calendar.events.list",
      method: "GET",
      path: "/calendar/v3/calendars/{calendarId}/events",
      answer: ({ query }) => {
        // Documented: orderBy=startTime is only allowed with singleEvents=true.
        if (query.get("orderBy") === "startTime" && query.get("singleEvents") !== "true")
          return {
            status: 400,
            json: googleError(400, "The requested ordering is not available for the particular query."),
          };
        return { json: { kind: "calendar#events", items: events } };
      },
    },
    {
      id: "calendar.events.insert",
      method: "POST",
      path: "/calendar/v3/calendars/{calendarId}/events",
      requiredBody: ["start", "end"],
      answer: ({ body, params }) => {
        const event = {
          ...(body as object),
          id: randomUUID().replace(/-/g, ""),
          htmlLink: `https://calendar.example/${params["calendarId"]}`,
          status: "confirmed",
        };
        events.push(event);
        return { json: event };
      },
    },
    {
      id: "drive.files.list",
      method: "GET",
      path: "/drive/v3/files",
      answer: ({ query }) => {
        const text = /contains '((?:[^'\\]|\\.)*)'/.exec(query.get("q") ?? "")?.[1]?.replace(/\\(.)/g, "$1") ?? "";
        const found = [...files].filter(([, f]) => f.name.includes(text) || f.content.includes(text));
        return { json: { files: found.map(([id, f]) => ({ id, name: f.name, mimeType: f.mimeType })) } };
      },
    },
    {
      id: "drive.files.get",
      method: "GET",
      path: "/drive/v3/files/{fileId}",
      answer: ({ params, query }) => {
        const file = files.get(params["fileId"]!);
        if (!file) return { status: 404, json: googleError(404, `File not found: ${params["fileId"]}.`) };
        if (query.get("alt") === "media") {
          if (file.mimeType.startsWith("application/vnd.google-apps."))
            return {
              status: 403,
              json: googleError(
                403,
                "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
              ),
            };
          return { text: file.content, contentType: file.mimeType };
        }
        return { json: { id: params["fileId"], name: file.name, mimeType: file.mimeType } };
      },
    },
    {
      id: "drive.files.export",
      method: "GET",
      path: "/drive/v3/files/{fileId}/export",
      requiredQuery: ["mimeType"],
      answer: ({ params, query }) => {
        const file = files.get(params["fileId"]!);
        if (!file) return { status: 404, json: googleError(404, `File not found: ${params["fileId"]}.`) };
        return { text: file.content, contentType: query.get("mimeType")! };
      },
    },
    {
      id: "drive.files.create (multipart upload)",
      method: "POST",
      path: "/upload/drive/v3/files",
      requiredQuery: ["uploadType"],
      answer: (request) => {
        const upload = multipart(request);
        if (request.query.get("uploadType") !== "multipart" || !upload)
          return { status: 400, json: googleError(400, "Bad multipart upload") };
        const id = randomUUID();
        const mimeType = String(upload.metadata["mimeType"] ?? "text/plain");
        files.set(id, { name: String(upload.metadata["name"]), mimeType, content: upload.media });
        return { json: { id, name: upload.metadata["name"], mimeType } };
      },
    },
    {
      id: "sheets.spreadsheets.values.get",
      method: "GET",
      path: "/v4/spreadsheets/{spreadsheetId}/values/{range}",
      answer: ({ params }) => ({
        json: { range: params["range"], majorDimension: "ROWS", values: sheets.get(params["spreadsheetId"]!) ?? [] },
      }),
    },
    {
      id: "sheets.spreadsheets.values.append",
      method: "POST",
      path: "/v4/spreadsheets/{spreadsheetId}/values/{range}:append",
      requiredQuery: ["valueInputOption"],
      requiredBody: ["values"],
      answer: ({ params, body }) => {
        const rows = (body as { values: unknown[][] }).values;
        const sheet = sheets.get(params["spreadsheetId"]!) ?? [];
        sheets.set(params["spreadsheetId"]!, [...sheet, ...rows]);
        return {
          json: {
            spreadsheetId: params["spreadsheetId"],
            updates: { updatedRange: params["range"], updatedRows: rows.length },
          },
        };
      },
    },
    {
      id: "sheets.spreadsheets.values.update",
      method: "PUT",
      path: "/v4/spreadsheets/{spreadsheetId}/values/{range}",
      requiredQuery: ["valueInputOption"],
      requiredBody: ["values"],
      answer: ({ params, body }) => {
        const rows = (body as { values: unknown[][] }).values;
        sheets.set(params["spreadsheetId"]!, rows);
        return { json: { updatedRange: params["range"], updatedCells: rows.flat().length } };
      },
    },
    {
      id: "docs.documents.get",
      method: "GET",
      path: "/v1/documents/{documentId}",
      answer: ({ params }) => {
        const doc = documents.get(params["documentId"]!);
        if (!doc) return { status: 404, json: googleError(404, "Requested entity was not found.") };
        const paragraphs = doc.text
          .split(/(?<=\n)/)
          .map((line) => ({ paragraph: { elements: [{ textRun: { content: line } }] } }));
        return {
          json: {
            documentId: params["documentId"],
            title: doc.title,
            body: { content: [{ sectionBreak: {} }, ...paragraphs] },
          },
        };
      },
    },
    {
      id: "docs.documents.create",
      method: "POST",
      path: "/v1/documents",
      requiredBody: ["title"],
      answer: ({ body }) => {
        const id = randomUUID();
        documents.set(id, { title: String((body as { title: string }).title), text: "" });
        return { json: { documentId: id, title: (body as { title: string }).title } };
      },
    },
    {
      id: "docs.documents.batchUpdate",
      method: "POST",
      path: "/v1/documents/{documentId}:batchUpdate",
      requiredBody: ["requests"],
      answer: ({ params, body }) => {
        const doc = documents.get(params["documentId"]!);
        if (!doc) return { status: 404, json: googleError(404, "Requested entity was not found.") };
        for (const r of (body as { requests: { insertText?: { text: string } }[] }).requests)
          doc.text += r.insertText?.text ?? "";
        return { json: { documentId: params["documentId"], replies: [{}] } };
      },
    },
  ];
  const fixture = await startProviderFixture(operations, googleError);
  return Object.assign(fixture, { sent, drafts, events, files, sheets, documents, inbox });
}
