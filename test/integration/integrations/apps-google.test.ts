import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { mintAppCredential } from "../../../core/app-credential.ts";
import { startGoogleFixture, type GoogleFixture } from "../../support/provider-fixtures/google.ts";
import { appsClient, appsSigningKey, connectApp, credential } from "./apps-harness.ts";
import { capturingLogger, internal, startProviderAndService, TestBrowser, type ProviderAndService } from "./harness.ts";

describe("Google apps served as MCP at /v1/mcp", () => {
  const redisUrl = inject("redisUrl");
  let google: GoogleFixture;
  let started: ProviderAndService;
  let service: string;
  const logs = capturingLogger();

  beforeAll(async () => {
    google = await startGoogleFixture();
    started = await startProviderAndService({
      redisUrl,
      prefix: `test:apps-google:${Date.now()}:`,
      extra: { KUBECREW_APPS_SIGNING_KEY: appsSigningKey, KUBECREW_GOOGLE_API_BASE_URL: google.url },
      logger: logs.logger,
    });
    service = started.service.url;
  });
  afterAll(async () => {
    await started?.stop();
    await google?.stop();
  });

  const mcpStatus = async (authorization?: string) =>
    (
      await fetch(`${service}/v1/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      })
    ).status;

  it("sends alice's mail with exactly the access token Google issued her", async () => {
    const { accessToken } = await connectApp(service, started.provider, "alice", "google", "gmail");
    const client = await appsClient(service, await credential("alice", ["gmail"]));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "gmail__fetch_emails",
      "gmail__get_email",
      "gmail__send_email",
      "gmail__create_draft",
    ]);
    expect(tools.find((t) => t.name === "gmail__send_email")!.inputSchema.required).toEqual(["to", "subject", "body"]);
    const result = await client.callTool({
      name: "gmail__send_email",
      arguments: { to: ["bob@example.com"], subject: "Quarterly numbers", body: "Revenue is up 12 %." },
    });
    expect(result.isError ?? false).toBe(false);
    expect(JSON.parse(client.text(result))).toMatchObject({ sent: true, id: expect.any(String) });
    expect(google.sent).toHaveLength(1);
    expect(google.sent[0]!.token).toBe(accessToken);
    expect(google.sent[0]!.message).toContain("To: bob@example.com\r\nSubject: Quarterly numbers\r\n");
    expect(google.sent[0]!.message).toContain(Buffer.from("Revenue is up 12 %.").toString("base64"));
    expect(google.violations).toEqual([]);
    await client.close();
  });

  it("carries out every Google action against the documented API", async () => {
    for (const product of ["calendar", "drive", "sheets", "docs"])
      await connectApp(service, started.provider, "carol", "google", product);
    await connectApp(service, started.provider, "carol", "google", "gmail");
    google.inbox.push({
      id: "m1",
      from: "dave@example.com",
      to: "carol@example.com",
      subject: "Lunch?",
      date: "Mon, 4 May 2026 10:00:00 +0000",
      body: "Thai place at noon",
    });
    google.files.set("doc-1", { name: "Plan", mimeType: "application/vnd.google-apps.document", content: "The plan." });
    google.documents.set("d-1", { title: "Notes", text: "line one\nline two\n" });
    const client = await appsClient(
      service,
      await credential("carol", ["gmail", "google_calendar", "google_drive", "google_sheets", "google_docs"]),
    );
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError ?? false, `${name}: ${client.text(result)}`).toBe(false);
      return JSON.parse(client.text(result)) as Record<string, unknown>;
    };
    expect(await call("gmail__fetch_emails", { query: "from:dave" })).toEqual({
      messages: [expect.objectContaining({ id: "m1", from: "dave@example.com", subject: "Lunch?" })],
    });
    expect(await call("gmail__get_email", { id: "m1" })).toMatchObject({ body: "Thai place at noon" });
    expect(await call("gmail__create_draft", { to: ["e@example.com"], subject: "Draft", body: "x" })).toMatchObject({
      draftId: expect.any(String),
    });
    expect(google.drafts).toHaveLength(1);
    await call("google_calendar__create_event", {
      summary: "Review",
      start: "2026-05-04T09:00:00+02:00",
      end: "2026-05-04T10:00:00+02:00",
      attendees: ["bob@example.com"],
    });
    expect(google.events[0]).toMatchObject({
      summary: "Review",
      start: { dateTime: "2026-05-04T09:00:00+02:00" },
      attendees: [{ email: "bob@example.com" }],
    });
    expect(await call("google_calendar__list_events", { timeMin: "2026-05-01T00:00:00Z" })).toMatchObject({
      events: [{ summary: "Review", start: "2026-05-04T09:00:00+02:00" }],
    });
    const uploaded = await call("google_drive__upload_file", { name: "report.txt", content: "all good" });
    expect(google.files.get(String(uploaded["id"]))).toEqual({
      name: "report.txt",
      mimeType: "text/plain",
      content: "all good",
    });
    expect(await call("google_drive__search_files", { query: "Plan" })).toEqual({
      files: [expect.objectContaining({ id: "doc-1", name: "Plan" })],
    });
    expect(await call("google_drive__get_file", { fileId: "doc-1" })).toMatchObject({ text: "The plan." });
    expect(await call("google_drive__get_file", { fileId: String(uploaded["id"]) })).toMatchObject({
      text: "all good",
    });
    await call("google_sheets__update_values", { spreadsheetId: "s1", range: "Sheet1!A1:B1", values: [["a", 1]] });
    await call("google_sheets__append_values", { spreadsheetId: "s1", range: "Sheet1!A1", values: [["b", 2]] });
    expect(await call("google_sheets__get_values", { spreadsheetId: "s1", range: "Sheet1!A1:B2" })).toEqual({
      range: "Sheet1!A1:B2",
      values: [
        ["a", 1],
        ["b", 2],
      ],
    });
    expect(await call("google_docs__get_document", { documentId: "d-1" })).toEqual({
      documentId: "d-1",
      title: "Notes",
      text: "line one\nline two\n",
    });
    const created = await call("google_docs__create_document", { title: "Minutes", text: "Agreed." });
    expect(google.documents.get(String(created["documentId"]))).toEqual({ title: "Minutes", text: "Agreed." });
    expect(google.violations).toEqual([]);
    await client.close();
  });

  it("lists only the credential's apps and actions, and refuses the others without calling Google", async () => {
    const client = await appsClient(service, await credential("carol", ["gmail/send_email", "google_docs"]));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "gmail__send_email",
      "google_docs__get_document",
      "google_docs__create_document",
    ]);
    const before = google.requests.length;
    const refused = await client.callTool({ name: "google_calendar__list_events", arguments: {} }).catch((e) => e);
    const text = refused instanceof Error ? refused.message : `${refused.isError} ${client.text(refused)}`;
    expect(text).toMatch(/google_calendar__list_events.*not found|not found.*google_calendar__list_events/i);
    expect(google.requests.length).toBe(before);
    await client.close();
  });

  it("answers a user without the app with a connect link for that user, which starts the sign-in", async () => {
    const client = await appsClient(service, await credential("bob", ["gmail"]));
    const before = google.requests.length;
    const result = await client.callTool({ name: "gmail__fetch_emails", arguments: {} });
    expect(result.isError).toBe(true);
    const text = client.text(result);
    expect(text).toMatch(new RegExp(`^gmail is not connected for user bob; connect at ${service}/v1/connect/\\S+$`));
    expect(google.requests.length).toBe(before);
    // The link is a real connect session for bob: it signs bob in and lands on the service's "connected" page.
    started.provider.account = { sub: "sub-bob", email: "bob@example.com" };
    const end = await new TestBrowser().open(text.split("connect at ")[1]!, { stopAtOrigin: "http://none.invalid" });
    expect(end.status).toBe(200);
    expect(end.body).toContain("google gmail is connected");
    expect((await internal(service, "GET", "/v1/internal/users/bob/connections")).body.connections).toMatchObject([
      { provider: "google", product: "gmail", userId: "bob" },
    ]);
    await client.close();
  });

  it("never reaches another user's connection: the user comes only from the credential", async () => {
    const client = await appsClient(service, await credential("mallory", ["gmail"]));
    const before = google.requests.length;
    const result = await client.callTool({
      name: "gmail__send_email",
      arguments: { to: ["x@example.com"], subject: "hi", body: "as alice?" },
    });
    expect(client.text(result)).toMatch(/^gmail is not connected for user mallory; connect at /);
    expect(google.requests.length).toBe(before);
    const nobody = await appsClient(service, await credential(null, ["gmail"]));
    const noUser = await nobody.callTool({ name: "gmail__fetch_emails", arguments: {} });
    expect(noUser.isError).toBe(true);
    expect(nobody.text(noUser)).toMatch(/^no user for this execution/);
    await client.close();
    await nobody.close();
  });

  it("tells the model which scope to grant when Google answers 403, and Google's status otherwise", async () => {
    const client = await appsClient(service, await credential("carol", ["google_calendar", "google_docs"]));
    google.refuseNext(403, "Request had insufficient authentication scopes.", "calendar.events.list");
    const scope = await client.callTool({ name: "google_calendar__list_events", arguments: {} });
    expect(scope.isError).toBe(true);
    expect(client.text(scope)).toMatch(
      new RegExp(`grant the https://www.googleapis.com/auth/calendar scope: reconnect at ${service}/v1/connect/\\S+$`),
    );
    const missing = await client.callTool({ name: "google_docs__get_document", arguments: { documentId: "nope" } });
    expect(client.text(missing)).toBe(
      "Google answered 404 to google_docs__get_document: Requested entity was not found.",
    );
    await client.close();
  });

  it("refuses missing, forged, expired and revoked credentials with 401, calling nothing", async () => {
    const before = google.requests.length;
    expect(await mcpStatus()).toBe(401);
    expect(await mcpStatus("Bearer not-a-credential")).toBe(401);
    const forged = await mintAppCredential("f".repeat(40), {
      executionUid: "forged",
      execution: "team-a/x",
      user: "alice",
      apps: ["gmail"],
      expiresAt: new Date(Date.now() + 60_000),
    });
    expect(await mcpStatus(`Bearer ${forged}`)).toBe(401);
    expect(
      await mcpStatus(`Bearer ${await credential("alice", ["gmail"], { expiresAt: new Date(Date.now() - 1000) })}`),
    ).toBe(401);

    const expiresAt = new Date(Date.now() + 600_000);
    const live = await credential("alice", ["gmail"], { executionUid: "finished-run", expiresAt });
    expect(await mcpStatus(`Bearer ${live}`)).toBe(200);
    const revoke = (body: unknown, key?: string) =>
      fetch(`${service}/v1/internal/app-credentials/revoke`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${key ?? started.env["KUBECREW_OAUTH_INTERNAL_API_KEY"]}`,
        },
        body: JSON.stringify(body),
      });
    expect(
      (await revoke({ executionUid: "finished-run", expiresAt }, "wrong-key-wrong-key-wrong-key-wrong")).status,
    ).toBe(401);
    const bad = await revoke({ executionUid: "finished-run", expiresAt: "tomorrow" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: "Bad Request", message: expect.stringMatching(/^expiresAt: /) });
    const ok = await revoke({ executionUid: "finished-run", expiresAt: expiresAt.toISOString() });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ revoked: true });
    expect(await mcpStatus(`Bearer ${live}`)).toBe(401);
    expect(google.requests.length).toBe(before);
  });

  it("refreshes an expiring token once for concurrent tool calls", async () => {
    started.provider.accessTokenTtlSeconds = 30; // within the service's 60 s refresh-ahead window
    await connectApp(service, started.provider, "erin", "google", "gmail");
    started.provider.accessTokenTtlSeconds = 3600;
    const refreshesBefore = started.provider.refreshCount();
    const sentBefore = google.sent.length;
    const client = await appsClient(service, await credential("erin", ["gmail/send_email"]));
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        client.callTool({
          name: "gmail__send_email",
          arguments: { to: ["z@example.com"], subject: `n${i}`, body: "." },
        }),
      ),
    );
    expect(results.map((r) => r.isError ?? false)).toEqual(Array(8).fill(false));
    expect(started.provider.refreshCount() - refreshesBefore).toBe(1);
    const tokens = new Set(google.sent.slice(sentBefore).map((s) => s.token));
    expect(tokens.size).toBe(1);
    expect(started.provider.issuedTokens()).toContain([...tokens][0]);
    await client.close();
  });

  it("writes no provider token and no app credential into any log line", async () => {
    const lines = logs.lines();
    expect(lines).toContain('"tool":"gmail__send_email"');
    for (const token of started.provider.issuedTokens()) expect(lines.includes(token)).toBe(false);
    expect(lines).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/);
  });
});
