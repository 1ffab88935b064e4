import { z } from "zod";
import { errorBody } from "../core/api-bodies.ts";

/** One documented answer: a description and a JSON body, with the headers it carries. */
export const json = (schema: z.ZodType, description: string, headers?: Record<string, z.ZodType>) => ({
  description,
  ...(headers ? { headers: z.object(headers) } : {}),
  content: { "application/json": { schema } },
});

const retryAfter = { "Retry-After": z.string().meta({ description: "Seconds to wait before trying again" }) };

/**
 * The answers every route of the crew API (and the admin API) can give whatever it does, each in the error body
 * `{error, message, details?}`: the request itself is unusable (400, 413, 415), the method is wrong (405), the
 * service failed (500) or a dependency is away (503). Listed on every operation so generated clients know them.
 */
export const requestErrors = {
  "400": json(
    errorBody,
    "Bad request: malformed JSON, wrong types or values (details name the fields), a body nested deeper than 64 " +
      "levels, a body not valid for its Content-Encoding, or a malformed %-escape in the path",
  ),
  "405": json(errorBody, "The path does not have this method; Allow lists the ones it has", {
    Allow: z.string().meta({ example: "GET, HEAD" }),
  }),
  "413": json(errorBody, "Body above the size limit"),
  "415": json(errorBody, "Body not JSON, or a Content-Encoding other than gzip, br or deflate"),
  "500": json(errorBody, "Unexpected failure; the body says nothing internal"),
  "503": json(errorBody, "The token store (Redis) is down or not answering", retryAfter),
};
