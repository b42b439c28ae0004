// The REST API as the UI calls it: every route of /api/v2 through the signed-in session (<root>/ui/api/v2: the
// token stays in an HttpOnly cookie script never sees; changes echo the session's CSRF token), and the UI's root
// (relative to the page, so the same files work under API Gateway's stage prefix).

const CSRF_HEADER = "X-CSRF-Token";

/** The UI's root path ("/" locally, "/prod/" behind API Gateway's stage), from the shell's relative base. */
export const root = new URL(document.querySelector('meta[name="updraft-base"]').content + "/",
  location.href).pathname;

/** A UI URL for a path such as "dags/x" (each segment given separately is percent-encoded). */
export function link(...segments) {
  return root + segments.map((s, i) => (i === 0 ? s : encodeURIComponent(s))).join("/");
}

// The session as GET <root>/ui/session answers it: { username, role, csrf_token } (nulls when signed out).
let current = null;

/** Who is signed in (asked once per page load, then kept until sign-in or sign-out). */
export async function session() {
  if (current === null) current = await api("/ui/session");
  return current;
}

/** The signed-in user ({ username, role }), or null; only after session() has answered. */
export function user() {
  return current && current.username ? current : null;
}

export async function signIn(username, password) {
  current = await api("/ui/session", { method: "POST", body: { username, password } });
  return current;
}

export async function signOut() {
  current = null;
  await api("/ui/session", { method: "DELETE" });
}

/** Every caller is admin (local mode without users): no sign-in page, no sign-out. */
export function allAdmins() {
  return Boolean(current && current.all_admins);
}

/** A VIEWER sees no buttons that change anything (the API refuses them anyway). */
export function canEdit() {
  return !current || current.role !== "VIEWER";
}

export class ApiError extends Error {
  constructor(status, detail) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.status = status;
    this.detail = detail;
  }
}

/** Encode each id of an API path: api("dags", dagId, "dagRuns"). */
export function path(...segments) {
  return segments.map(encodeURIComponent).join("/");
}

/** Call /api/v2/<rel> through the session (or <rel> from the root when it starts with "/"); JSON in and out. A
 * 401 (the session expired, or there is none) sends the browser to the login page. */
export async function api(rel, { method = "GET", body, query } = {}) {
  const url = new URL(rel.startsWith("/") ? root + rel.slice(1) : root + "ui/api/v2/" + rel, location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    for (const v of [].concat(value)) if (v !== undefined && v !== null && v !== "") url.searchParams.append(name, v);
  }
  const headers = { Accept: "application/json" };
  if (method !== "GET" && current && current.csrf_token) headers[CSRF_HEADER] = current.csrf_token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, { method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (response.status === 401 && !rel.startsWith("/")) {
    current = null;
    location.assign(root + "auth/login?next=" + encodeURIComponent(location.pathname + location.search));
    throw new ApiError(401, "signed out");
  }
  if (!response.ok) throw new ApiError(response.status, (data && (data.detail ?? data.error)) || response.statusText);
  return data;
}

/** Every item of a paged list route (Airflow's limit/offset, at most 100 a page). */
export async function all(rel, key, query = {}) {
  const out = [];
  for (let offset = 0; ; offset += 100) {
    const page = await api(rel, { query: { ...query, limit: 100, offset } });
    out.push(...page[key]);
    if (page[key].length < 100 || out.length >= page.total_entries) return out;
  }
}
