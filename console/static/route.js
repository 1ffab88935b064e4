// The page a #/ route names: the crew list, what waits for the person, one crew's tab (and execution), the flows, one
// flow (and a run of it), or none (the not-found view).
export function currentRoute(hash = location.hash) {
  let parts;
  try {
    parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    return { page: "not-found", hash }; // a malformed %-escape (URIError): a page nothing links to
  }
  if (parts.length === 0 || (parts[0] === "crews" && !parts[1])) return { page: "crews" };
  if (parts[0] === "waiting" && parts.length === 1) return { page: "waiting" };
  if (parts[0] === "flows" && parts.length === 1) return { page: "flows" };
  if (parts[0] === "flows" && parts.length <= 3) return { page: "flow", flow: parts[1], run: parts[2] };
  if (parts[0] !== "crews") return { page: "not-found", hash };
  return { page: "crew", crew: parts[1], tab: parts[2] ?? "run", execution: parts[3] };
}
