// The REST API as the UI calls it: every path under /api/v2, the bearer token from the login page, and the
// UI's root (relative to the page, so the same files work under API Gateway's stage prefix).

const TOKEN_KEY = "updraft.token";

/** The UI's root path ("/" locally, "/prod/" behind API Gateway's stage), from the shell's relative base. */
export const root = new URL(document.querySelector('meta[name="updraft-base"]').content + "/",
  location.href).pathname;

/** A UI URL for a path such as "dags/x" (each segment given separately is percent-encoded). */
export function link(...segments) {
  return root + segments.map((s, i) => (i === 0 ? s : encodeURIComponent(s))).join("/");
}

export function token() {
  return localStorage.getItem(TOKEN_KEY);
}

export function saveToken(value) {
  localStorage.setItem(TOKEN_KEY, value);
  // Airflow's UI keeps its token in the _token cookie too; the API reads the Authorization header.
  document.cookie = `_token=${value}; path=${root}; SameSite=Strict`;
}

export function forgetToken() {
  localStorage.removeItem(TOKEN_KEY);
  document.cookie = `_token=; path=${root}; max-age=0`;
}

/** The signed-in user's claims (Airflow's simple auth manager puts the role in the JWT). */
export function claims() {
  const raw = token();
  if (!raw) return null;
  try {
    const part = raw.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(part + "=".repeat((4 - (part.length % 4)) % 4)));
  } catch {
    return {};
  }
}

/** The signed-in user's roles: Airflow's "role" claim, or the Cognito groups the environment's pool puts in. */
export function roles() {
  const user = claims() || {};
  return [].concat(user.role ?? [], user["cognito:groups"] ?? []).map((r) => String(r).toUpperCase());
}

/** A VIEWER sees no buttons that change anything (the API refuses them anyway). */
export function canEdit() {
  const mine = roles();
  return !mine.length || mine.some((r) => r !== "VIEWER");
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

/** Call /api/v2/<rel> (or <rel> from the root when it starts with "/"); JSON in and out. A 401 to a signed-in
 * browser (its token expired or was refused) sends it to the login page. */
export async function api(rel, { method = "GET", body, query } = {}) {
  const url = new URL(rel.startsWith("/") ? root + rel.slice(1) : root + "api/v2/" + rel, location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    for (const v of [].concat(value)) if (v !== undefined && v !== null && v !== "") url.searchParams.append(name, v);
  }
  const headers = { Accept: "application/json" };
  if (token()) headers.Authorization = `Bearer ${token()}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (response.status === 401 && headers.Authorization) {
    forgetToken();
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
