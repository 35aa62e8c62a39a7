#!/usr/bin/env node
// `node check-test-server.mjs <adminUrl>`: exit 0 when the tests can make their databases on that
// PostgreSQL (it connects, and its user may create databases); else exit 1 with the problem on stderr.
// Run by the root's `scripts/preflight.mjs` (npm test's first step), which has no `pg` of its own.
import pg from "pg";

const adminUrl = process.argv[2];
const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
try {
  await client.connect();
  const { rows } = await client.query(
    "SELECT rolcreatedb OR rolsuper AS can FROM pg_roles WHERE rolname = current_user",
  );
  if (!rows[0]?.can) {
    console.error(`the user of ${adminUrl} may not create databases (ALTER ROLE … CREATEDB)`);
    process.exitCode = 1;
  }
} catch (error) {
  const database = new URL(adminUrl).pathname.slice(1);
  const hint = /does not exist/.test(String(error?.message)) ? ` (createdb -h <host> -U postgres ${database})` : "";
  console.error(`cannot connect to ${adminUrl}: ${error?.message ?? error}${hint}`);
  process.exitCode = 1;
} finally {
  await client.end().catch(() => {});
}
