// The dashboard's production server (`pnpm --filter @tristate/web start`): Next.js's own request
// handler behind a plain Node HTTP server, for one reason: it appends the TCP peer's address to
// `X-Forwarded-For`, as a reverse proxy does. `next start` only sets the header when the client sent
// none, so a browser could name any address; here the nearest hop is always the real peer, and the
// executor (trusting this server via `TRISTATE_TRUSTED_PROXIES`) counts failed sign-ins per browser
// address, believing earlier hops only when that peer is itself a proxy it trusts.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import next from "next";

const port = Number(process.env.PORT || 3000);
const app = next({ dev: false, dir: dirname(fileURLToPath(import.meta.url)), port });
await app.prepare();
const handle = app.getRequestHandler();

/** `req`'s `X-Forwarded-For` with the TCP peer appended (the chain a proxy passes on). */
function appendPeer(req) {
  const peer = req.socket.remoteAddress;
  if (!peer) return;
  const prior = req.headers["x-forwarded-for"];
  const chain = Array.isArray(prior) ? prior.join(", ") : prior;
  req.headers["x-forwarded-for"] = chain ? `${chain}, ${peer}` : peer;
}

const server = createServer((req, res) => {
  appendPeer(req);
  handle(req, res).catch((error) => {
    console.error("dashboard: request failed", error);
    if (!res.headersSent) res.statusCode = 500;
    res.end();
  });
});
// HOST: the interface to listen on; default 127.0.0.1 like the executor (a container sets 0.0.0.0).
const host = process.env.HOST || "127.0.0.1";
server.listen(port, host, () =>
  console.log(`Tristate dashboard at http://${host === "0.0.0.0" || host === "::" ? "localhost" : host}:${port}`),
);
function stop() {
  server.close(() => process.exit(0));
  server.closeAllConnections?.();
  setTimeout(() => process.exit(0), 2000).unref();
}
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.once(signal, stop);

/** The parent of `pid` (Linux `/proc`), or null when unknown. */
function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}
// `pnpm --filter @tristate/web start` (pnpm → its shell → this server): pnpm does not always pass a
// SIGTERM or Ctrl-C on, so stop as well when any process that started this one is gone.
const starters = [];
for (let pid = process.ppid; pid > 1 && starters.length < 16; pid = parentOf(pid) ?? 0) starters.push(pid);
const firstParent = process.ppid;
setInterval(() => {
  const gone = starters.some((pid) => {
    try {
      process.kill(pid, 0);
      return false;
    } catch (error) {
      return error.code !== "EPERM";
    }
  });
  if (gone || process.ppid !== firstParent) stop();
}, 500).unref();
