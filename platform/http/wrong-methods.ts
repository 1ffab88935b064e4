import { HttpError } from "./http-error.ts";

/** The parts of express's requests, responses and routes this needs (express 5 exposes `router.stack`). */
interface RequestLike {
  method: string;
  baseUrl: string;
  path: string;
}
interface ResponseLike {
  set(name: string, value: string): ResponseLike;
  status(code: number): ResponseLike;
  end(): unknown;
}
type Handler = (req: RequestLike, res: ResponseLike, next: (err?: unknown) => void) => void;
interface RouteLike {
  path: unknown;
  methods: Record<string, boolean | undefined>;
  all(handler: Handler): unknown;
}

/**
 * Makes every route of `router` answer a method it does not declare with 405 and `Allow` (the documented error body,
 * through the error mapper) instead of falling through to a 404, and OPTIONS with 204 and `Allow`: call it once all routes are registered.
 * Routes sharing a path (a GET and a DELETE registered apart) pool their methods; HEAD comes with GET.
 */
export function refuseWrongMethods<R extends { stack: { route?: unknown }[] }>(router: R): R {
  const byPath = new Map<string, { methods: Set<string>; last: RouteLike }>();
  for (const layer of router.stack) {
    const route = layer.route as RouteLike | undefined;
    if (!route) continue;
    const key = JSON.stringify(route.path);
    const entry = byPath.get(key) ?? { methods: new Set<string>(), last: route };
    for (const [method, on] of Object.entries(route.methods)) {
      if (on && method !== "_all") entry.methods.add(method.toUpperCase());
    }
    entry.last = route;
    byPath.set(key, entry);
  }
  for (const { methods, last } of byPath.values()) {
    const use = [...methods].join(" or ");
    if (methods.has("GET")) methods.add("HEAD");
    const allow = [...methods].join(", ");
    last.all((req, res, next) => {
      if (req.method === "OPTIONS") {
        res.set("Allow", allow).status(204).end();
        return;
      }
      const path = req.baseUrl + req.path;
      next(new HttpError(405, "Method Not Allowed", `Use ${use} for ${path}`, { headers: { Allow: allow } }));
    });
  }
  return router;
}
