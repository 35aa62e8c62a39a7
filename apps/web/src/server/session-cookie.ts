/**
 * The httpOnly cookie that holds the dashboard session's opaque id (made by the executor's
 * `sessions.create`; never the API key, and the browser's JavaScript never reads it).
 */
export const SESSION_COOKIE = "tristate_session";

/** Request header the proxy sets to the requested path and query (for `/login?next=`). */
export const PATH_HEADER = "x-tristate-path";
