import type { NextConfig } from "next";
import { contentSecurityPolicy } from "./src/csp";

const dev = process.env.NODE_ENV === "development";

/** Paths the proxy does not see (it sets each page's policy, with its nonce: `src/csp.ts`). */
const NOT_PAGES = ["/api/:path*", "/_next/:path*", "/favicon.ico", "/icon.svg"];

const nextConfig: NextConfig = {
  // A build elsewhere than `.next` (e.g. to run the e2e suite beside a server using the default one).
  ...(process.env.TRISTATE_WEB_DIST_DIR ? { distDir: process.env.TRISTATE_WEB_DIST_DIR } : {}),
  poweredByHeader: false,
  reactStrictMode: true,
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "X-Frame-Options", value: "DENY" },
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "same-origin" },
        ],
      },
      ...NOT_PAGES.map((source) => ({
        source,
        headers: [{ key: "Content-Security-Policy", value: contentSecurityPolicy(null, dev) }],
      })),
      {
        // Behind an https proxy (X-Forwarded-Proto: https): browsers keep to https from then on.
        source: "/:path*",
        has: [{ type: "header", key: "x-forwarded-proto", value: "https" }],
        headers: [{ key: "Strict-Transport-Security", value: "max-age=31536000; includeSubDomains" }],
      },
    ];
  },
};

export default nextConfig;
