import { z } from "zod";
import { appNames } from "../../core/apps.ts";

/** Bodies of the crew API's `/connections` routes (a user's connected apps). */

export const appConnection = z
  .object({
    app: z.enum(appNames as [string, ...string[]]).describe("The app, by CrewAI's name"),
    connected: z.boolean().describe("Whether the user has connected it (and it needs no reconnecting)"),
    status: z
      .enum(["connected", "not_connected", "reauthorization_required"])
      .describe("reauthorization_required: the provider refused the stored grant; connect again"),
    account: z.object({ email: z.string().nullable() }).nullable().describe("The connected account, when there is one"),
    scopes: z.array(z.string()).describe("The scopes granted (empty when not connected)"),
  })
  .meta({ id: "AppConnection" });
export type AppConnection = z.infer<typeof appConnection>;

export const connectionsResponse = z
  .object({ connections: z.array(appConnection) })
  .meta({ id: "ConnectionsResponse" });

export const connectRequest = z
  .object({
    returnUrl: z
      .string()
      .url()
      .max(4096)
      .optional()
      .describe(
        "Where the browser goes after connecting (with status=connected or status=error); it must be on a host the integrations service allows. Default: this API's /console/",
      ),
  })
  .meta({ id: "ConnectRequest" });

export const connectResponse = z
  .object({
    url: z.string().describe("Send the user's browser here to connect the app (single use, expires)"),
    expiresAt: z.string().optional(),
  })
  .meta({ id: "ConnectResponse" });

export const disconnectResponse = z
  .object({ app: z.string(), deleted: z.literal(true) })
  .meta({ id: "DisconnectResponse" });
