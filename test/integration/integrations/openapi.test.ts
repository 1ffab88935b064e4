import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { startProviderAndService, uniquePrefix, type ProviderAndService } from "./harness.ts";

// The integrations service's served OpenAPI document describes exactly the routes its express app registers, so a
// route added without documentation (or documentation left for a removed route) fails here.

let service: ProviderAndService;
beforeAll(async () => {
  service = await startProviderAndService({ redisUrl: inject("redisUrl"), prefix: uniquePrefix("openapi") });
});
afterAll(() => service?.stop());

interface Document {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
}

it("serves an OpenAPI 3.1 document without a key that lists every registered route and nothing else", async () => {
  const response = await fetch(`${service.service.url}/openapi.json`);
  expect(response.status).toBe(200);
  const doc = (await response.json()) as Document;
  expect(doc.openapi).toBe("3.1.0");
  const documented = Object.entries(doc.paths)
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
  const registered = service.service.routes
    .map(({ method, path }) => `${method} ${path.replace(/:(\w+)/g, "{$1}")}`)
    .sort();
  expect(registered.length).toBeGreaterThanOrEqual(10);
  expect(documented).toEqual(registered);
});

it("lists the error body, 405 and 500 on every operation", async () => {
  const doc = (await (await fetch(`${service.service.url}/openapi.json`)).json()) as Document;
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      expect(Object.keys(op.responses), `${method} ${path}`).toEqual(expect.arrayContaining(["400", "405", "500"]));
    }
  }
});
