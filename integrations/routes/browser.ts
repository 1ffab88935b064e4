import { Router, type RequestHandler } from "express";
import type { IntegrationsConfig } from "../config.ts";
import { clearSignInCookie, readSignInCookie, setSignInCookie, type CookieOptions } from "../sign-in-cookie.ts";
import type { SignIn } from "../sign-in.ts";
import { rendersPages } from "./error-handler.ts";
import { connectedPage } from "../error-page.ts";

/** The routes the user's browser visits: the connect link, and the provider's callback. */
export function browserRoutes(config: IntegrationsConfig, signIn: SignIn, now: () => Date): Router {
  const cookieOptions: CookieOptions = {
    secret: config.cookieSecret,
    // The cookie only travels to the callback, at its public path (which includes a proxy prefix such as /oauthsvc).
    path: `${config.publicUrl.pathname.replace(/\/+$/, "")}/v1/auth`,
    secure: config.publicUrl.protocol === "https:",
  };
  const router = Router();
  const privatePage: RequestHandler = (_req, res, next) => {
    res.set("Cache-Control", "no-store");
    res.set("Referrer-Policy", "no-referrer");
    next();
  };
  router.use(["/v1/connect", "/v1/auth"], rendersPages, privatePage);

  router.get("/v1/connect/:sessionId", async (req, res) => {
    const { authorizationUrl, cookie } = await signIn.start(req.params.sessionId);
    res.append("Set-Cookie", setSignInCookie(cookie, cookieOptions, now().getTime()));
    res.redirect(303, authorizationUrl);
  });

  router.get("/v1/auth/:provider/callback", async (req, res) => {
    const query = new URL(req.originalUrl, "http://callback.invalid").searchParams;
    const cookie = readSignInCookie(req.headers.cookie, config.cookieSecret, now().getTime());
    // The cookie is single use whatever happens next.
    res.append("Set-Cookie", clearSignInCookie(cookieOptions));
    const { location } = await signIn.complete(req.params.provider, query, cookie);
    res.redirect(303, location);
  });

  // Where a tool's "connect at <url>" link returns the browser (unless KUBECREW_APPS_CONNECT_RETURN_URL says otherwise).
  router.get("/v1/connected", privatePage, (req, res) => {
    const query = new URL(req.originalUrl, "http://connected.invalid").searchParams;
    const what = [query.get("provider"), query.get("product")].filter(Boolean).join(" ") || "The app";
    const page =
      query.get("status") === "connected"
        ? connectedPage("Connected", `${what} is connected. You can close this tab; the agent can use it now.`)
        : connectedPage("Not connected", `${what} was not connected (${query.get("error") ?? "no answer"}).`);
    res.type("html").send(page);
  });

  return router;
}
