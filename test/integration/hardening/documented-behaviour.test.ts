import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens } from "../../support/dev-server.ts";
import { runKubecrew } from "../../support/occupied-port.ts";

// Issue 12 item 10: behaviour the README and the OpenAPI document now state.

let dev: RunningDev;
beforeAll(async () => {
  dev = await startTestDev();
});
afterAll(() => dev?.stop());

const kickoff = (body: unknown) =>
  fetch(`${dev.url}/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("null input values", () => {
  it("are refused with 400 naming inputs.<name>: CrewAI's inputs are values for placeholders", async () => {
    const res = await kickoff({ inputs: { topic: null } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: "Bad Request",
      message:
        "Invalid kickoff request: inputs.topic: must not be null (send a string, number, boolean, object or array)",
      details: [
        {
          field: "inputs.topic",
          message: "must not be null (send a string, number, boolean, object or array)",
        },
      ],
    });
  });

  it("inside an object or array value are kept (that value is JSON)", async () => {
    const res = await kickoff({ inputs: { topic: { name: "x", note: null }, extra: [null] } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ kickoff_id: expect.any(String) });
  });
});

it("kubecrew dev refuses a KUBECREW_DEV_ORG_TOKEN shorter than 16 characters at start-up", async () => {
  const run = await runKubecrew("dev", { PORT: "0", KUBECREW_DEV_ORG_TOKEN: "kco_short" });
  expect(run.code).toBe(1);
  expect(run.stderr).toContain("KUBECREW_DEV_ORG_TOKEN");
  expect(run.stderr).toContain(">=16 characters");
});
