import type { Router } from "express";
import { answerWrongMethods } from "../../platform/http/wrong-methods.ts";
import { IntegrationError } from "../errors.ts";

/** Every route of `router` answers a method it does not have with 405 and `Allow` (OPTIONS: 204 with `Allow`). */
export const refuseWrongMethods = (router: Router): Router =>
  answerWrongMethods(
    router,
    ({ allow, use, path }) =>
      new IntegrationError(405, "Method Not Allowed", `Use ${use} for ${path}`, { Allow: allow }),
  );
