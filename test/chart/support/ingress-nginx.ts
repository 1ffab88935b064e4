import type { V1Ingress } from "@kubernetes/client-node";
import { startNginx, type Nginx } from "../../support/nginx.ts";

/**
 * Debian's nginx configured from rendered Ingress objects the way ingress-nginx configures itself, for the
 * annotations the chart uses: with `use-regex` on any Ingress of a host every path of that host is a case-insensitive
 * regex location (`~* "^<path>"`), longest path first; `rewrite-target` becomes `rewrite "(?i)<path>" <target> break`;
 * `proxy-body-size` becomes `client_max_body_size` (ingress-nginx's default is 1m). Services are reached at the
 * loopback ports given, since pods of the local node listen on the machine itself.
 */
export function ingressNginxLocations(ingresses: V1Ingress[], servicePorts: Record<string, number>): string {
  const locations = ingresses.flatMap((ingress) => {
    const annotations = ingress.metadata?.annotations ?? {};
    const bodySize = annotations["nginx.ingress.kubernetes.io/proxy-body-size"] ?? "1m";
    const rewrite = annotations["nginx.ingress.kubernetes.io/rewrite-target"];
    return (ingress.spec?.rules ?? []).flatMap((rule) =>
      (rule.http?.paths ?? []).map((p) => {
        const service = p.backend.service!.name;
        const port = servicePorts[service];
        if (!port) throw new Error(`no local port for Service ${service}`);
        return { path: p.path!, bodySize, rewrite, port };
      }),
    );
  });
  const regex = ingresses.some((i) => i.metadata?.annotations?.["nginx.ingress.kubernetes.io/use-regex"] === "true");
  locations.sort((a, b) => b.path.length - a.path.length);
  return locations
    .map(
      ({ path, bodySize, rewrite, port }) => `
    location ${regex ? `~* "^${path}"` : path} {
      client_max_body_size ${bodySize};
      ${rewrite ? `rewrite "(?i)${path}" ${rewrite} break;` : ""}
      proxy_set_header Host $host:$server_port;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_pass http://127.0.0.1:${port};
    }`,
    )
    .join("");
}

export function startIngressNginx(
  ingresses: V1Ingress[],
  servicePorts: Record<string, number>,
  listen: number,
): Promise<Nginx> {
  return startNginx({ port: listen, locations: ingressNginxLocations(ingresses, servicePorts) });
}
