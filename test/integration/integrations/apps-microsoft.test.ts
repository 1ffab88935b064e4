import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { docx, startGraphFixture, type GraphFixture } from "../../support/provider-fixtures/microsoft-graph.ts";
import { appsClient, appsSigningKey, connectApp, credential } from "./apps-harness.ts";
import { capturingLogger, startProviderAndService, uniquePrefix, type ProviderAndService } from "./harness.ts";

describe("Microsoft apps (Graph) served as MCP at /v1/mcp", () => {
  const redisUrl = inject("redisUrl");
  let graph: GraphFixture;
  let started: ProviderAndService;
  let service: string;
  const logs = capturingLogger();

  beforeAll(async () => {
    graph = await startGraphFixture();
    started = await startProviderAndService({
      redisUrl,
      prefix: uniquePrefix("apps-microsoft"),
      extra: { KUBECREW_APPS_SIGNING_KEY: appsSigningKey, KUBECREW_MICROSOFT_GRAPH_BASE_URL: graph.url },
      logger: logs.logger,
    });
    service = started.service.url;
  });
  afterAll(async () => {
    await started?.stop();
    await graph?.stop();
  });

  it("sends alice's Outlook mail with exactly the access token Microsoft issued her", async () => {
    const { accessToken } = await connectApp(service, started.provider, "alice", "microsoft", "outlook");
    const client = await appsClient(service, await credential("alice", ["microsoft_outlook/send_mail"]));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["microsoft_outlook__send_mail"]);
    const result = await client.callTool({
      name: "microsoft_outlook__send_mail",
      arguments: { to: ["bob@example.com"], subject: "Agenda", body: "Item one." },
    });
    expect(result.isError ?? false, client.text(result)).toBe(false);
    expect(graph.sentMail).toEqual([
      {
        token: accessToken,
        message: {
          subject: "Agenda",
          body: { contentType: "Text", content: "Item one." },
          toRecipients: [{ emailAddress: { address: "bob@example.com" } }],
        },
      },
    ]);
    expect(graph.violations).toEqual([]);
    await client.close();
  });

  it("carries out every Microsoft action against the documented Graph API", async () => {
    for (const product of ["outlook", "calendar", "onedrive", "excel", "word"])
      await connectApp(service, started.provider, "carol", "microsoft", product);
    graph.inbox.push({ id: "m1", subject: "Invoice 42", from: "billing@example.com", bodyPreview: "Due Friday" });
    graph.items.set("notes-1", {
      name: "notes.txt",
      mimeType: "text/plain",
      content: Buffer.from("remember the milk"),
    });
    graph.items.set("word-1", {
      name: "Plan.docx",
      mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      content: await docx(["Step one & two", "Step <three>"]),
    });
    graph.items.set("book-1", { name: "Budget.xlsx", mimeType: "application/vnd.ms-excel", content: Buffer.from("") });
    const client = await appsClient(
      service,
      await credential("carol", [
        "microsoft_outlook",
        "microsoft_calendar",
        "microsoft_onedrive",
        "microsoft_excel",
        "microsoft_word",
      ]),
    );
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError ?? false, `${name}: ${client.text(result)}`).toBe(false);
      return JSON.parse(client.text(result)) as Record<string, unknown>;
    };
    expect(await call("microsoft_outlook__list_messages", { query: "Invoice" })).toEqual({
      messages: [expect.objectContaining({ id: "m1", subject: "Invoice 42", from: "billing@example.com" })],
    });
    expect(await call("microsoft_outlook__list_messages", {})).toMatchObject({ messages: [{ id: "m1" }] });
    await call("microsoft_calendar__create_event", {
      subject: "Standup",
      start: "2026-05-04T09:00:00",
      end: "2026-05-04T09:15:00",
      timeZone: "Europe/Berlin",
      attendees: ["dan@example.com"],
    });
    expect(graph.events[0]).toMatchObject({
      subject: "Standup",
      start: { dateTime: "2026-05-04T09:00:00", timeZone: "Europe/Berlin" },
      attendees: [{ emailAddress: { address: "dan@example.com" }, type: "required" }],
    });
    expect(
      await call("microsoft_calendar__list_events", { start: "2026-05-01T00:00:00Z", end: "2026-05-08T00:00:00Z" }),
    ).toMatchObject({ events: [{ subject: "Standup" }] });
    expect(await call("microsoft_onedrive__search_files", { query: "notes" })).toMatchObject({
      files: [{ id: "notes-1", name: "notes.txt" }],
    });
    expect(await call("microsoft_onedrive__get_file", { item: "notes-1" })).toMatchObject({
      text: "remember the milk",
      truncated: false,
    });
    expect(await call("microsoft_word__get_document", { item: "word-1" })).toMatchObject({
      name: "Plan.docx",
      text: "Step one & two\nStep <three>",
    });
    // Graph answers content with a 302 to a pre-authenticated URL on another host: the file is read from there, and
    // the user's access token stays with Graph (a cross-origin redirect drops the Authorization header).
    expect(graph.downloads).toEqual([
      { item: "notes-1", authorization: undefined },
      { item: "word-1", authorization: undefined },
    ]);
    await call("microsoft_excel__update_range", {
      item: "book-1",
      worksheet: "Sheet1",
      address: "A1:B1",
      values: [["rent", 1200]],
    });
    expect(await call("microsoft_excel__get_range", { item: "book-1", worksheet: "Sheet1", address: "A1:B1" })).toEqual(
      { address: "Sheet1!A1:B1", values: [["rent", 1200]] },
    );
    expect(graph.violations).toEqual([]);
    await client.close();
  });

  it("tells the model which scope to grant when Graph answers 403", async () => {
    const client = await appsClient(service, await credential("carol", ["microsoft_calendar"]));
    graph.refuseNext(403, "Access is denied. Check credentials and try again.", "user.ListCalendarView");
    const result = await client.callTool({
      name: "microsoft_calendar__list_events",
      arguments: { start: "2026-05-01T00:00:00Z", end: "2026-05-08T00:00:00Z" },
    });
    expect(result.isError).toBe(true);
    expect(client.text(result)).toMatch(
      new RegExp(`grant the Calendars\\.ReadWrite scope: reconnect at ${service}/v1/connect/\\S+$`),
    );
    await client.close();
  });

  it("writes no provider token into any log line", () => {
    const lines = logs.lines();
    expect(lines).toContain('"tool":"microsoft_outlook__send_mail"');
    for (const token of started.provider.issuedTokens()) expect(lines.includes(token)).toBe(false);
  });
});
