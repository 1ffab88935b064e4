import type { StatusResponse } from "../core/api-bodies.ts";
import { EXECUTION_ID } from "../core/execution.ts";
import { ApiFailure, type CrewApiClient } from "./api-client.ts";
import { CommandFailure } from "./command-failure.ts";

/** How many crews are asked at once when the crew of an execution is not given. */
const CONCURRENT_LOOKUPS = 8;

export interface LocatedExecution {
  crew: string;
  status: StatusResponse;
}

/**
 * The crew of an execution and its status. The API's paths name the crew (`/crews/{crew}/status/{id}`): with --crew
 * one request; without, the crews the token may use are asked in turn, a few at a time, until one has it.
 */
export async function locateExecution(client: CrewApiClient, id: string, crew?: string): Promise<LocatedExecution> {
  if (!EXECUTION_ID.test(id)) throw new CommandFailure(`"${id}" is not a kickoff ID (a UUID, as kubecrew run prints)`);
  if (crew !== undefined) return { crew, status: await client.status(crew, id) };
  const { crews } = await client.crews();
  for (let i = 0; i < crews.length; i += CONCURRENT_LOOKUPS) {
    const found = await Promise.all(
      crews.slice(i, i + CONCURRENT_LOOKUPS).map(async ({ name }) => {
        try {
          return { crew: name, status: await client.status(name, id) };
        } catch (err) {
          if (err instanceof ApiFailure && err.status === 404) return undefined;
          throw err;
        }
      }),
    );
    const hit = found.find((f) => f !== undefined);
    if (hit) return hit;
  }
  throw new CommandFailure(
    `no execution with ID ${id} in the crews this token may use (${crews.map((c) => c.name).join(", ") || "none"})`,
  );
}
