import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
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
 * @throws EmbeddedDatabaseInUseError when another live process holds the folder (its lock file
 *   `<dataDir>.lock` names it); other errors when the folder cannot be created.
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const inMemory = dataDir.startsWith("memory://");
  if (!inMemory) await mkdir(dataDir, { recursive: true });
  const release = inMemory ? () => {} : lockDataDir(dataDir);
  let db: PGlite;
  try {
    db = await PGlite.create({ dataDir });
  } catch (error) {
    release();
    throw error;
  }
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 4 });
  try {
    await server.start();
  } catch (error) {
    await db.close();
    release();
    throw error;
  }
  const url = `postgresql://postgres@${server.getServerConn()}/postgres`;
  return {
    url,
    dataDir,
    async close() {
      await server.stop();
      await db.close();
      release();
    },
  };
}

/** Another live process has the embedded data folder open (two PGlite instances would corrupt it). */
export class EmbeddedDatabaseInUseError extends Error {
  override readonly name = "EmbeddedDatabaseInUseError";
  /** The process holding the folder. */
  readonly pid: number;
  constructor(dataDir: string, pid: number) {
    super(
      `the embedded database in ${dataDir} is in use by process ${pid} (a running Tristate service?): stop it first, or use a PostgreSQL server (DATABASE_URL)`,
    );
    this.pid = pid;
  }
}

/**
 * Takes `<dataDir>.lock` (holding this process's pid) so that only one process opens the folder.
 * A lock left by a process that no longer runs is taken over.
 * @returns a function releasing the lock (idempotent).
 * @throws EmbeddedDatabaseInUseError when a live process holds it.
 */
function lockDataDir(dataDir: string): () => void {
  const path = `${dataDir.replace(/\/+$/, "")}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.off("exit", release);
        try {
          if (readFileSync(path, "utf8").trim() === String(process.pid)) unlinkSync(path);
        } catch {
          // already gone
        }
      };
      process.on("exit", release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(readFileSync(path, "utf8").trim());
      if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
        throw new EmbeddedDatabaseInUseError(dataDir, holder);
      }
      try {
        unlinkSync(path); // stale: its process is gone
      } catch {
        // raced with another taker; try again
      }
    }
  }
  throw new Error(`could not take the lock ${path}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
