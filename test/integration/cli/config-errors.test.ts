import { describe, expect, it } from "vitest";
import { kubecrew } from "../tokens/support.ts";

// One convention for every command: a bad or missing variable stops the process at start-up with exit status 1 and
// one line on stderr, `kubecrew <command>: Invalid configuration: <VARIABLE>: <problem>`; nothing on stdout.
describe("a configuration mistake at start-up", () => {
  it.each([
    ["api", { KUBECREW_REDIS_URL: "redis://127.0.0.1:6379", PORT: "80000" }, "PORT", /Too big/],
    ["api", { LOG_LEVEL: "loud", KUBECREW_REDIS_URL: "redis://127.0.0.1:6379" }, "LOG_LEVEL", /Invalid option/],
    ["api", {}, "KUBECREW_REDIS_URL", /is required/],
    ["controller", { KUBECREW_CONTROLLER_WORKERS: "0" }, "KUBECREW_CONTROLLER_WORKERS", /Too small/],
    ["controller", { KUBECREW_RUNNER_LOG_LEVEL: "chatty" }, "KUBECREW_RUNNER_LOG_LEVEL", /Invalid option/],
    ["dev", { KUBECREW_DEV_ORG_TOKEN: "short" }, "KUBECREW_DEV_ORG_TOKEN", /Too small/],
    ["integrations", {}, "KUBECREW_OAUTH_PUBLIC_URL", /is required/],
    ["token", {}, "KUBECREW_REDIS_URL", /is required/],
  ] as const)("kubecrew %s with %j: exit 1, one line naming %s", async (command, env, variable, problem) => {
    const args = command === "token" ? ["token", "list"] : [command];
    const run = await kubecrew(args, env);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]!.startsWith(`kubecrew ${command}: Invalid configuration: ${variable}: `)).toBe(true);
    expect(lines[0]).toMatch(problem);
  });
});
