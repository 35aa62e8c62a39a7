/** The httpOnly cookie that holds the signed-in API key (the browser's JavaScript never reads it). */
export const SESSION_COOKIE = "tristate_session";

/** How long a sign-in lasts, seconds (12 hours). */
export const SESSION_MAX_AGE_S = 12 * 3600;

/** Request header the proxy sets to the requested path and query (for `/login?next=`). */
export const PATH_HEADER = "x-tristate-path";
