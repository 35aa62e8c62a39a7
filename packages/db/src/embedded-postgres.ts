import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

/** A running embedded PostgreSQL (PGlite) reachable over a loopback socket. */
export interface EmbeddedPostgres {
  /** `postgresql://` URL for `pg` / `@prisma/adapter-pg`. */
  url: string;
  /** The data folder, or `memory://` when in memory. */
  dataDir: string;
  /** Stops the socket server and closes the database (flushing it to the data folder). */
  close(): Promise<void>;
}

/**
 * Starts PGlite on `dataDir` (created if missing) and serves it on 127.0.0.1 at a free port. PGlite runs
 * one session: clients should use a single connection (`singleSession` in the store). One process at
 * a time may open a data folder.
 * @param dataDir - folder path, or `memory://` for a throwaway database.
 * @throws when the folder cannot be created or is held by another PGlite.
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  if (!dataDir.startsWith("memory://")) await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create({ dataDir });
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 4 });
  try {
    await server.start();
  } catch (error) {
    await db.close();
    throw error;
  }
  const url = `postgresql://postgres@${server.getServerConn()}/postgres`;
  return {
    url,
    dataDir,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
