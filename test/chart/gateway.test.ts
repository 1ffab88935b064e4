/**
 * The chart's Gateway API routes (gateway.enabled), rendered by the pinned helm: HTTPRoutes for the API and the
 * integrations service on a shared hostname (under /oauthsvc, prefix replaced by /) or on the integrations' own
 * hostnames, checked the way a Gateway would route requests with them. hack/kind-e2e.sh runs them behind Traefik.
 */
import { describe, expect, it } from "vitest";
import { container, envValue, find, helm, ofKind, render, template, chartDir, type Manifest } from "./support/helm.ts";

interface HTTPRoute extends Manifest {
  spec: {
    parentRefs: { name: string; namespace?: string; sectionName?: string }[];
    hostnames?: string[];
    rules: {
      matches: { path: { type: string; value: string } }[];
      filters?: { type: string; urlRewrite?: { path: { type: string; replacePrefixMatch: string } } }[];
      backendRefs: { name: string; port: number }[];
    }[];
  };
}

const parentRefs = [{ name: "public", namespace: "gateway-system", sectionName: "http" }];
const routes = (values: object) => ofKind(render({ values: { gateway: values } }), "HTTPRoute") as HTTPRoute[];

/** Gateway API PathPrefix: matches whole path elements ("/oauthsvc" matches "/oauthsvc/x", not "/oauthsvcs"). */
function prefixMatches(prefix: string, path: string): boolean {
  const p = prefix.replace(/\/+$/, "");
  return p === "" || path === p || path.startsWith(`${p}/`);
}

/** Where a Gateway sends host+path with these routes: the longest matching prefix among routes for the host wins,
 * and a ReplacePrefixMatch filter replaces the matched prefix. */
function route(all: HTTPRoute[], host: string, path: string): { service: string; path: string } | undefined {
  const candidates = all
    .filter((r) => !r.spec.hostnames || r.spec.hostnames.includes(host))
    .flatMap((r) => r.spec.rules)
    .flatMap((rule) => rule.matches.map((m) => ({ rule, prefix: m.path.value })))
    .filter(({ prefix }) => prefixMatches(prefix, path))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  const best = candidates[0];
  if (!best) return undefined;
  const rewrite = best.rule.filters?.find((f) => f.type === "URLRewrite")?.urlRewrite?.path;
  let upstream = path;
  if (rewrite?.type === "ReplacePrefixMatch") {
    const rest = path.slice(best.prefix.replace(/\/+$/, "").length);
    upstream = rewrite.replacePrefixMatch.replace(/\/+$/, "") + rest || "/";
    if (!upstream.startsWith("/")) upstream = `/${upstream}`;
  }
  return { service: best.rule.backendRefs[0]!.name, path: upstream };
}

describe("Gateway API on a shared hostname", () => {
  const shared = routes({ enabled: true, parentRefs, hostnames: ["crews.example.com"] });

  it("attaches an API route and an integrations route to the configured Gateway and hostname", () => {
    expect(shared.map((r) => [r.metadata.name, r.apiVersion])).toEqual([
      ["kubecrew-api", "gateway.networking.k8s.io/v1"],
      ["kubecrew-integrations", "gateway.networking.k8s.io/v1"],
    ]);
    for (const r of shared) {
      expect(r.metadata.namespace).toBe("crews");
      expect(r.spec.parentRefs).toEqual(parentRefs);
      expect(r.spec.hostnames).toEqual(["crews.example.com"]);
    }
    expect(shared[0]!.spec.rules[0]!.backendRefs).toEqual([{ name: "kubecrew-api", port: 80 }]);
    expect(shared[1]!.spec.rules[0]!.filters).toEqual([
      { type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/" } } },
    ]);
  });

  it("sends /oauthsvc/… to the integrations service without the prefix, everything else to the API", () => {
    const host = "crews.example.com";
    expect(route(shared, host, "/oauthsvc/v1/auth/google/callback")).toEqual({
      service: "kubecrew-integrations",
      path: "/v1/auth/google/callback",
    });
    expect(route(shared, host, "/oauthsvc/health")).toEqual({ service: "kubecrew-integrations", path: "/health" });
    expect(route(shared, host, "/oauthsvc")).toEqual({ service: "kubecrew-integrations", path: "/" });
    expect(route(shared, host, "/oauthsvcs/health")).toEqual({ service: "kubecrew-api", path: "/oauthsvcs/health" });
    expect(route(shared, host, "/kickoff")).toEqual({ service: "kubecrew-api", path: "/kickoff" });
    expect(route(shared, "other.example.com", "/kickoff")).toBeUndefined();
  });

  it("tells the integrations service its public URL under the prefix", () => {
    const manifests = render({ values: { gateway: { enabled: true, parentRefs, hostnames: ["crews.example.com"] } } });
    expect(
      envValue(container(find(manifests, "Deployment", "kubecrew-integrations")), "KUBECREW_OAUTH_PUBLIC_URL"),
    ).toBe("https://crews.example.com/oauthsvc");
  });

  it("without hostnames the routes take every hostname of the listener", () => {
    const any = routes({ enabled: true, parentRefs });
    expect(any.map((r) => r.spec.hostnames)).toEqual([undefined, undefined]);
    expect(route(any, "anything.example.com", "/oauthsvc/health")?.service).toBe("kubecrew-integrations");
  });

  it("without the integrations route only the API route is made", () => {
    expect(routes({ enabled: true, parentRefs, integrations: { enabled: false } }).map((r) => r.metadata.name)).toEqual(
      ["kubecrew-api"],
    );
  });
});

describe("Gateway API with the integrations on their own hostname", () => {
  const dedicated = routes({
    enabled: true,
    parentRefs,
    hostnames: ["crews.example.com"],
    scheme: "http",
    integrations: { hostnames: ["oauth.example.com"] },
  });

  it("serves the integrations service at / of its hostname, without rewriting, and the API apart", () => {
    expect(route(dedicated, "oauth.example.com", "/v1/auth/google/callback")).toEqual({
      service: "kubecrew-integrations",
      path: "/v1/auth/google/callback",
    });
    expect(dedicated[1]!.spec.rules[0]!.filters).toBeUndefined();
    expect(route(dedicated, "crews.example.com", "/oauthsvc/health")).toEqual({
      service: "kubecrew-api",
      path: "/oauthsvc/health",
    });
  });

  it("makes the integrations' own hostname their public URL, with the configured scheme", () => {
    const manifests = render({
      values: {
        gateway: { enabled: true, parentRefs, scheme: "http", integrations: { hostnames: ["oauth.example.com"] } },
      },
    });
    expect(
      envValue(container(find(manifests, "Deployment", "kubecrew-integrations")), "KUBECREW_OAUTH_PUBLIC_URL"),
    ).toBe("http://oauth.example.com");
  });
});

describe("Gateway API values", () => {
  it("are off by default: no HTTPRoute", () => {
    expect(ofKind(render(), "HTTPRoute")).toEqual([]);
  });

  it("need a Gateway to attach to", () => {
    const result = template({ values: { gateway: { enabled: true } } });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("gateway.enabled needs gateway.parentRefs");
  });

  it.each([
    ["a hostname with a path", { hostnames: ["crews.example.com/x"] }],
    ["an unknown scheme", { scheme: "ftp" }],
    ["a parentRef without a name", { parentRefs: [{ namespace: "x" }] }],
    ["a path with a regex", { integrations: { path: "/oauthsvc(/|$)" } }],
    ["an unknown key", { className: "traefik" }],
  ])("reject %s", (_name, gateway) => {
    const result = template({ values: { gateway: { enabled: true, parentRefs, ...gateway } } });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/values don't meet the specifications of the schema/);
  });

  it("print the routed URL in the NOTES", () => {
    const result = helm([
      "install",
      "kubecrew",
      chartDir,
      "--dry-run=client",
      "--namespace",
      "crews",
      "--set",
      "gateway.enabled=true",
      "--set",
      "gateway.parentRefs[0].name=public",
      "--set",
      "gateway.hostnames[0]=crews.example.com",
    ]);
    expect(result.status).toBe(0);
    const notes = result.stdout.slice(result.stdout.indexOf("NOTES:"));
    expect(notes).toContain("export KUBECREW_URL=https://crews.example.com\n");
    expect(notes).not.toContain("port-forward service/kubecrew-api");
    expect(notes).toContain("integrations service at https://crews.example.com/oauthsvc.");
  });

  it("put gateway.port in the NOTES' URLs and the integrations' public URL (a Gateway on a port of its own)", () => {
    const notesOf = (values: object) => {
      const args = Object.entries(values).flatMap(([key, value]) => ["--set", `${key}=${String(value)}`]);
      const result = helm(["install", "kubecrew", chartDir, "--dry-run=client", "--namespace", "crews", ...args]);
      expect(result.status).toBe(0);
      return result.stdout.slice(result.stdout.indexOf("NOTES:"));
    };
    const shared = {
      "gateway.enabled": true,
      "gateway.parentRefs[0].name": "public",
      "gateway.hostnames[0]": "localhost",
      "gateway.scheme": "http",
      "gateway.port": 31080,
    };
    const notes = notesOf(shared);
    expect(notes).toContain("export KUBECREW_URL=http://localhost:31080\n");
    expect(notes).toContain("integrations service at http://localhost:31080/oauthsvc.");
    const integrations = find(
      render({
        values: { gateway: { enabled: true, parentRefs, hostnames: ["localhost"], scheme: "http", port: 31080 } },
      }),
      "Deployment",
      "kubecrew-integrations",
    );
    expect(envValue(container(integrations), "KUBECREW_OAUTH_PUBLIC_URL")).toBe("http://localhost:31080/oauthsvc");

    const own = notesOf({ ...shared, "gateway.integrations.hostnames[0]": "oauth.localhost" });
    expect(own).toContain("integrations service at http://oauth.localhost:31080.");
  });
});
