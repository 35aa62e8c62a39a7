import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
} from "@prisma/driver-adapter-utils";
import * as bg from "@prisma/schema-engine-wasm/schema_engine_bg";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { survivePoolErrors } from "../pool-errors.ts";
import { CharAsTextClient, withCharColumns } from "./char-as-text-client.ts";

/** The WebAssembly schema engine's API (the class `SchemaEngine` of `@prisma/schema-engine-wasm`). */
export type SchemaEngine = bg.SchemaEngine;

/** The slice of the WebAssembly global used here (the ES2023 lib without DOM does not declare it). */
declare const WebAssembly: {
  compile(bytes: Uint8Array): Promise<object>;
  Instance: new (module: object, imports: Record<string, object>) => { exports: Record<string, unknown> };
};

let loaded: Promise<void> | undefined;

/**
 * Instantiates `schema_engine_bg.wasm` once per process. The package is a bundler-style module
 * (`import * as wasm from "./x.wasm"`), which Node cannot load, so we wire the bindings ourselves.
 * @throws when the wasm file is missing or fails to compile.
 */
function loadWasm(): Promise<void> {
  loaded ??= (async () => {
    // The engine reports a Rust panic's message here before it throws `RuntimeError: unreachable`.
    const g = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: { set_message(message: string): void } };
    g.PRISMA_WASM_PANIC_REGISTRY ??= {
      set_message(message: string) {
        process.stderr.write(`prisma schema engine panicked: ${message}\n`);
      },
    };
    const bindings = fileURLToPath(import.meta.resolve("@prisma/schema-engine-wasm/schema_engine_bg"));
    const bytes = await readFile(join(dirname(bindings), "schema_engine_bg.wasm"));
    const module = await WebAssembly.compile(bytes);
    const instance = new WebAssembly.Instance(module, {
      "./schema_engine_bg.js": bg,
    });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
  })();
  return loaded;
}

/** An open schema engine bound to one database, and how to release it. */
export interface OpenSchemaEngine {
  engine: SchemaEngine;
  /** Frees the engine and ends its connections. */
  close(): Promise<void>;
}

/** Connecting for migrations: at most 10 s per attempt, TCP keep-alive on. */
const MIGRATION_CONNECT = { connectionTimeoutMillis: 10_000, keepAlive: true } as const;

/**
 * Opens Prisma's WebAssembly schema engine on `databaseUrl` through `@prisma/adapter-pg`.
 * A shadow database (for diffs from the migrations folder) is created and dropped on that server.
 * @param databaseUrl - a `postgresql://` URL.
 * @param schema - the Prisma schema text, when the engine needs it as its initial datamodel.
 * @throws when the engine cannot start or the database is unreachable.
 */
export async function openSchemaEngine(
  databaseUrl: string,
  schema?: { path: string; content: string },
): Promise<OpenSchemaEngine> {
  await loadWasm();
  // A PoolConfig without `connectionString`: the adapter makes the shadow database's config by
  // overriding `database`, which a connection string would silently win over.
  const config = parseIntoClientConfig(databaseUrl);
  // Connecting is bounded (a stalled server fails the attempt, which applyMigrations retries);
  // statements are not: a migration may run long.
  const pool = new pg.Pool({ ...config, ...MIGRATION_CONNECT, max: 2, Client: CharAsTextClient });
  survivePoolErrors(pool); // a connection ended by the server (a forced drop) is not our error
  const adapter = bindMigrationAwareSqlAdapterFactory(shadowSafeFactory(pool, config));
  const logs: string[] = [];
  const engine = await bg.SchemaEngine.new(
    { datamodels: schema ? [[schema.path, schema.content]] : undefined },
    (log: string) => {
      logs.push(log);
    },
    adapter,
  );
  return {
    engine,
    async close() {
      engine.free();
      await pool.end();
    },
  };
}

/**
 * `PrismaPg` as a migration-aware factory, with a shadow database that is dropped reliably:
 * the adapter's own shadow database drops the database while its pool still holds a connection,
 * which PostgreSQL refuses, leaving `prisma_migrate_shadow_db_*` behind.
 */
function shadowSafeFactory(pool: pg.Pool, config: pg.ClientConfig): SqlMigrationAwareDriverAdapterFactory {
  const main = new PrismaPg(pool);
  return {
    provider: main.provider,
    adapterName: main.adapterName,
    connect: async () => withCharColumns(await main.connect()),
    async connectToShadowDb(): Promise<SqlDriverAdapter> {
      const database = `prisma_migrate_shadow_db_${globalThis.crypto.randomUUID().replaceAll("-", "")}`;
      await pool.query(`CREATE DATABASE "${database}"`);
      const shadowPool = new pg.Pool({ ...config, ...MIGRATION_CONNECT, database, max: 2, Client: CharAsTextClient });
      // DROP … WITH (FORCE) below ends any connection still open; that must not crash the process.
      survivePoolErrors(shadowPool);
      const shadow = await new PrismaPg(shadowPool).connect();
      // The adapter splits a migration at every ";", which cuts a function body (`$$ … ; … $$`) apart:
      // send each migration whole, as `applyMigrations` does (the simple protocol runs many statements).
      shadow.executeScript = async (script: string) => {
        await shadowPool.query(script);
      };
      const dispose = shadow.dispose.bind(shadow);
      shadow.dispose = async () => {
        await dispose();
        await shadowPool.end();
        await pool.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      };
      return withCharColumns(shadow);
    },
  };
}
