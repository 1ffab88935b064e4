import { Router } from "express";
import { integrationsOpenApiDocument } from "../openapi.ts";

/** `GET /openapi.json`: the service's OpenAPI 3.1 document, no key needed (it holds no secret). */
export function documentRoutes(): Router {
  const document = integrationsOpenApiDocument();
  const router = Router();
  router.get("/openapi.json", (_req, res) => {
    res.json(document);
  });
  return router;
}
