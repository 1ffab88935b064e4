import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../core/logger.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { crewYaml, startTestDev, tokens, waitFor } from "../../support/dev-server.ts";

// Webhook URLs under the outbound URL policy, in `kubecrew dev` (loopback allowed: receivers live on the machine).
let dev: RunningDev;
let receiver: Server;
let receiverUrl: string;
const received: { path: string; body: string }[] = [];
const logLines: string[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c));
    req.on("end", () => {
      received.push({ path: req.url ?? "", body });
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const port = (receiver.address() as AddressInfo).port;
  receiverUrl = `http://127.0.0.1:${port}`;
  const log = createLogger({ level: "info" }, { write: (line: string) => void logLines.push(line) });
  dev = await startTestDev(
    { "quick.yaml": crewYaml("quick", "mock", { tasks: 1 }) },
    {
      log,
      // Names resolved without DNS: one stands for a webhook host that points at the cloud metadata address.
      resolver: async (hostname) => [
        { address: hostname === "metadata.test" ? "169.254.169.254" : "127.0.0.1", family: 4 },
      ],
    },
  );
});
afterAll(async () => {
  await dev?.stop();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

const kickoff = (body: unknown) =>
  fetch(`${dev.url}/crews/quick/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("webhook URLs at kickoff", () => {
  it.each([
    ["taskWebhookUrl", "file:///etc/passwd", "file: URLs are refused: only http and https"],
    ["stepWebhookUrl", "javascript:alert(1)", "javascript: URLs are refused: only http and https"],
    [
      "crewWebhookUrl",
      "http://169.254.169.254/latest/meta-data/",
      "169.254.169.254 is a cloud metadata address; calls to it are refused",
    ],
    ["crewWebhookUrl", "http://[fe80::1]/hook", "fe80::1 is a linkLocal address; calls to it are refused"],
  ])("refuses %s %s with 400 naming the field", async (field, url, message) => {
    const res = await kickoff({ inputs: { topic: "x" }, [field]: url });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: "Bad Request",
      message: `Invalid kickoff request: ${field}: ${message}`,
      details: [{ field, message }],
    });
  });
});

describe("webhook delivery", () => {
  it("delivers to a loopback receiver in kubecrew dev", async () => {
    const res = await kickoff({
      inputs: { topic: "tides" },
      taskWebhookUrl: `${receiverUrl}/task`,
      crewWebhookUrl: `${receiverUrl}/crew`,
    });
    const { kickoff_id } = (await res.json()) as { kickoff_id: string };
    await waitFor(async () => received.filter((r) => r.body.includes(kickoff_id)).length === 2 || undefined);
    expect(
      received
        .filter((r) => r.body.includes(kickoff_id))
        .map((r) => r.path)
        .sort(),
    ).toEqual(["/crew", "/task"]);
  });

  it("refuses at delivery a name that resolves to a refused address, and never connects", async () => {
    const port = new URL(receiverUrl).port;
    const res = await kickoff({ inputs: { topic: "tides" }, crewWebhookUrl: `http://metadata.test:${port}/crew` });
    expect(res.status).toBe(200); // a name passes kickoff; its address is only known at delivery
    const { kickoff_id } = (await res.json()) as { kickoff_id: string };
    const refusal = await waitFor(async () => logLines.find((l) => l.includes("Webhook refused by the outbound")));
    expect(JSON.parse(refusal)).toMatchObject({
      level: 40,
      reason: "metadata",
      msg:
        "Webhook refused by the outbound URL policy: metadata.test resolves to 169.254.169.254: " +
        "169.254.169.254 is a cloud metadata address; calls to it are refused",
    });
    expect(received.some((r) => r.body.includes(kickoff_id))).toBe(false);
  });
});
