import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appsMcpServer } from "./apps-source.ts";

describe("appsMcpServer", () => {
  it("is the apps endpoint with the credential as bearer, offering exactly the agent's app actions", async () => {
    const file = join(await mkdtemp(join(tmpdir(), "apps-source-")), "credential");
    await writeFile(file, "the.credential.jwt\n");
    const server = await appsMcpServer(
      { name: "assistant", apps: ["gmail/send_email", "google_docs"] },
      { url: "http://integrations:8787/v1/mcp", credentialFile: file },
    );
    expect(server).toEqual({
      name: "apps",
      url: "http://integrations:8787/v1/mcp",
      transport: "streamable-http",
      headers: [{ name: "Authorization", value: "Bearer the.credential.jwt" }],
      tools: ["gmail__send_email", "google_docs__get_document", "google_docs__create_document"],
      timeoutSeconds: 30,
    });
  });

  it("is nothing for an agent without apps, configured or not", async () => {
    expect(await appsMcpServer({ name: "a", apps: [] }, undefined)).toBeUndefined();
  });

  it("fails naming what is missing, never a credential", async () => {
    await expect(appsMcpServer({ name: "a", apps: ["notion"] }, undefined)).rejects.toThrow(
      'agent "a" declares apps (notion), but no apps service is configured for the runner (KUBECREW_APPS_URL)',
    );
    await expect(
      appsMcpServer({ name: "a", apps: ["notion"] }, { url: "http://x/v1/mcp", credentialFile: "/nonexistent/cred" }),
    ).rejects.toThrow(
      `agent "a" declares apps (notion), but its execution's app credential is not at /nonexistent/cred`,
    );
  });
});
