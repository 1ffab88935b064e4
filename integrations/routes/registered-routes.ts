/** One route as express registered it: an upper-case method and its path pattern (`/v1/connect/:sessionId`). */
export interface RegisteredRoute {
  method: string;
  path: string;
}

interface RouteLike {
  path: unknown;
  methods: Record<string, boolean | undefined>;
}

/** The routes of an express 5 router (`router.stack`), read before the wrong-method handlers are added. */
export function registeredRoutes(router: { stack: { route?: unknown }[] }): RegisteredRoute[] {
  return router.stack.flatMap((layer) => {
    const route = layer.route as RouteLike | undefined;
    if (!route || typeof route.path !== "string") return [];
    const path = route.path;
    return Object.entries(route.methods)
      .filter(([method, on]) => on && method !== "_all")
      .map(([method]) => ({ method: method.toUpperCase(), path }));
  });
}
