import type { Command } from "commander";
import { clientRecordBody, createClientBody } from "../api/admin/bodies.ts";
import { CommandFailure, crewsText, optionErrors, table, withTokenStore } from "./token-store-session.ts";

const collect = (value: string, previous: string[]) => [...previous, value];

/** `kubecrew client create|list|revoke`: service accounts for the OAuth 2.0 client credentials grant. */
export function registerClientCommand(program: Command): void {
  const client = program
    .command("client")
    .description("Manage service-account clients of POST /oauth/token (in the Redis at KUBECREW_REDIS_URL)");

  client
    .command("create")
    .description("Create a client and print its client_id and client_secret (the secret once: only its hash is kept)")
    .requiredOption(
      "--crew <name>",
      "crew its tokens are valid for; repeat for several, '*' for every crew",
      collect,
      [],
    )
    .option("--role <role>", "org or user: the kind of principal its access tokens carry", "org")
    .option("--name <name>", "a note saying what the client is for")
    .option("--json", "print JSON")
    .action(async (options: { crew: string[]; role: string; name?: string; json?: boolean }) => {
      await withTokenStore("client", process.env, async (store) => {
        const parsed = createClientBody.safeParse({
          crews: options.crew.includes("*") ? "*" : options.crew,
          role: options.role,
          ...(options.name !== undefined ? { name: options.name } : {}),
        });
        if (!parsed.success) {
          throw new CommandFailure(optionErrors(parsed.error, { crews: "--crew", role: "--role", name: "--name" }));
        }
        const body = parsed.data;
        const { clientSecret, record } = await store.createClient({
          role: body.role,
          crews: body.crews,
          ...(body.name ? { name: body.name } : {}),
        });
        if (options.json) {
          process.stdout.write(JSON.stringify({ ...clientRecordBody(record), client_secret: clientSecret }) + "\n");
        } else {
          process.stdout.write(
            [
              `client_id:     ${record.clientId}`,
              `client_secret: ${clientSecret}`,
              `role:          ${record.role}`,
              `crews:         ${crewsText(record.crews)}`,
            ].join("\n") + "\n",
          );
        }
        console.error("Store the client_secret now: it is not shown again (kubecrew keeps only its hash).");
      });
    });

  client
    .command("list")
    .description("List clients: ids and metadata, never the secrets")
    .option("--json", "print JSON")
    .action(async (options: { json?: boolean }) => {
      await withTokenStore("client", process.env, async (store) => {
        const clients = await store.listClients();
        if (options.json) {
          process.stdout.write(JSON.stringify({ clients: clients.map(clientRecordBody) }) + "\n");
          return;
        }
        process.stdout.write(
          table(
            ["CLIENT_ID", "ROLE", "CREWS", "NAME", "CREATED"],
            clients.map((c) => [c.clientId, c.role, crewsText(c.crews), c.name ?? "", c.created]),
          ),
        );
      });
    });

  client
    .command("revoke")
    .description("Revoke a client and every access token it obtained")
    .argument("<client_id>", "the client's id")
    .action(async (clientId: string) => {
      await withTokenStore("client", process.env, async (store) => {
        if (!(await store.revokeClient(clientId))) throw new CommandFailure(`No client with id ${clientId}`);
        process.stdout.write(`Revoked client ${clientId} and its access tokens\n`);
      });
    });
}
