import { Router } from "express";

const explanation =
  "This request was meant for the kubecrew integrations service, but it reached the crew API: the Ingress route " +
  "for the integrations service is not configured. Route /oauthsvc (shared host) or a dedicated host to the " +
  "integrations Service (Helm: ingress.integrations.enabled=true).";

/**
 * Provider callbacks and /oauthsvc requests that reach the crew API because the Ingress lacks the integrations route
 * answer a clear error instead of a bare 404: the person who sees it is usually mid-sign-in in a browser.
 */
export function integrationsFallback(): Router {
  const router = Router();
  router.all(["/oauthsvc", "/oauthsvc/*rest", "/v1/auth/:provider/callback"], (req, res) => {
    const body = { error: "Integrations route not configured", message: explanation };
    res.status(502);
    if (req.accepts(["json", "html"]) === "html") {
      res
        .type("html")
        .send(
          `<!doctype html><html><head><meta charset="utf-8"><title>Integrations unavailable</title></head>` +
            `<body><h1>Integrations route not configured</h1><p>${explanation}</p></body></html>`,
        );
      return;
    }
    res.json(body);
  });
  return router;
}
