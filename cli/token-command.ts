import type { Command } from "commander";
import { CommandFailure, crewsText, optionErrors, table, withTokenStore } from "./token-store-session.ts";
import { createTokenBody, tokenRecordBody } from "../api/admin/bodies.ts";
import { parseDuration } from "./duration.ts";

const collect = (value: string, previous: string[]) => [...previous, value];

/** `kubecrew token create|list|revoke`: org and user bearer tokens in the Redis at KUBECREW_REDIS_URL. */
export function registerTokenCommand(program: Command): void {
  const token = program
    .command("token")
    .description("Manage the crew API's bearer tokens (in the Redis at KUBECREW_REDIS_URL)");

  token
    .command("create")
    .description("Create a bearer token and print it (once: only its hash is kept)")
    .requiredOption("--crew <name>", "crew the token is valid for; repeat for several, '*' for every crew", collect, [])
    .requiredOption("--kind <kind>", "org (full operations on its crews) or user (kickoff, own executions)")
    .option("--user <user>", "the user a user token belongs to (required with --kind user)")
    .option("--ttl <duration>", "lifetime, e.g. 3600, 90m, 12h, 30d, at most 10 years (default: until revoked)")
    .option("--json", "print JSON")
    .action(async (options: { crew: string[]; kind: string; user?: string; ttl?: string; json?: boolean }) => {
      await withTokenStore("token", process.env, async (store) => {
        const ttlSeconds = options.ttl === undefined ? undefined : parseDuration(options.ttl);
        if (options.ttl !== undefined && ttlSeconds === undefined) {
          throw new CommandFailure(`--ttl: "${options.ttl}" is not a duration (e.g. 3600, 90m, 12h, 30d)`);
        }
        const parsed = createTokenBody.safeParse({
          kind: options.kind,
          crews: options.crew.includes("*") ? "*" : options.crew,
          ...(options.user !== undefined ? { user: options.user } : {}),
          ...(ttlSeconds !== undefined ? { ttl_seconds: ttlSeconds } : {}),
        });
        if (!parsed.success) {
          throw new CommandFailure(
            optionErrors(parsed.error, { kind: "--kind", crews: "--crew", user: "--user", ttl_seconds: "--ttl" }),
          );
        }
        const body = parsed.data;
        const { token: secret, record } = await store.createToken({
          kind: body.kind,
          crews: body.crews,
          ...(body.user ? { user: body.user } : {}),
          ...(body.ttl_seconds ? { ttlSeconds: body.ttl_seconds } : {}),
        });
        if (options.json) {
          process.stdout.write(JSON.stringify({ token: secret, ...tokenRecordBody(record) }) + "\n");
        } else {
          process.stdout.write(
            [
              `token:   ${secret}`,
              `id:      ${record.id}`,
              `kind:    ${record.kind}`,
              `crews:   ${crewsText(record.crews)}`,
              `subject: ${record.subject}`,
              `expires: ${record.expires ?? "never (until revoked)"}`,
            ].join("\n") + "\n",
          );
        }
        console.error("Store the token now: it is not shown again (kubecrew keeps only its hash).");
      });
    });

  token
    .command("list")
    .description("List org and user tokens: ids and metadata, never the tokens")
    .option("--json", "print JSON")
    .action(async (options: { json?: boolean }) => {
      await withTokenStore("token", process.env, async (store) => {
        const tokens = await store.listTokens();
        if (options.json) {
          process.stdout.write(JSON.stringify({ tokens: tokens.map(tokenRecordBody) }) + "\n");
          return;
        }
        process.stdout.write(
          table(
            ["ID", "KIND", "CREWS", "SUBJECT", "CREATED", "EXPIRES"],
            tokens.map((t) => [t.id, t.kind, crewsText(t.crews), t.subject, t.created, t.expires ?? "never"]),
          ),
        );
      });
    });

  token
    .command("revoke")
    .description("Revoke a token by its id (from token list)")
    .argument("<id>", "the token's id")
    .action(async (id: string) => {
      await withTokenStore("token", process.env, async (store) => {
        if (!(await store.revokeToken(id))) throw new CommandFailure(`No token with id ${id}`);
        process.stdout.write(`Revoked token ${id}\n`);
      });
    });
}
