// The crew API, called with the console's session cookie (no bearer token): state-changing requests carry the
// session's CSRF token, which the server checks.
let csrf = "";

export function setCsrf(token) {
  csrf = token ?? "";
}

export class ApiFailure extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export async function api(path, { method = "GET", body } = {}) {
  const headers = { accept: "application/json" };
  if (method !== "GET") headers["x-csrf-token"] = csrf;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status === 204) return undefined;
  const answer = await res.json().catch(() => undefined);
  if (!res.ok) throw new ApiFailure(res.status, answer);
  return answer;
}

export const crewPath = (crew, rest = "") => `/crews/${encodeURIComponent(crew)}${rest}`;
