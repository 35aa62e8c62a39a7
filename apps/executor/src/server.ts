import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { createContext, type Services } from "./trpc/context.ts";
import { appRouter } from "./trpc/router.ts";

/** The HTTP server: `/trpc/*` (the API), `/healthz` (liveness), `/readyz` (database reachable, migrations applied). */
export interface HttpServer {
  server: Server;
  /** Requests being served now. */
  inFlight(): number;
}

/** Builds the HTTP server (not listening yet). `ready()` answers `/readyz`. */
export function createHttpServer(
  services: Services,
  ready: () => Promise<{ ok: boolean; detail: string }>,
): HttpServer {
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: "/trpc/",
    maxBodySize: services.env.TRISTATE_MAX_BODY_BYTES,
    createContext: ({ req }) => createContext(services, req),
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR") services.logger.error({ err: error, path }, "procedure failed");
    },
  });
  let inFlight = 0;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (path === "/healthz") return json(res, 200, { ok: true });
    if (path === "/readyz") {
      ready().then(
        (r) => json(res, r.ok ? 200 : 503, r),
        (error: unknown) => json(res, 503, { ok: false, detail: String(error) }),
      );
      return;
    }
    if (!path.startsWith("/trpc/"))
      return json(res, 404, { error: { message: `no route ${path}; the API is under /trpc/` } });
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > services.env.TRISTATE_MAX_BODY_BYTES) {
      return json(res, 413, {
        error: {
          message: `request body over ${services.env.TRISTATE_MAX_BODY_BYTES} bytes`,
          data: { code: "PAYLOAD_TOO_LARGE", httpStatus: 413 },
        },
      });
    }
    inFlight++;
    res.on("close", () => inFlight--);
    trpc(req, res);
  });
  server.requestTimeout = 0; // calls run up to their deadline; the executor bounds them
  server.headersTimeout = 30_000;
  return { server, inFlight: () => inFlight };
}
