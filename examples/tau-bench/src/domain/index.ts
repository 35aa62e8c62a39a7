/** The τ-bench domains as pure functions over in-memory state. */
export * from "./calculate.ts";
export * from "./database.ts";
export * from "./py-json.ts";
export * from "./py-number.ts";
export * from "./schema.ts";
export * from "./tasks.ts";
export * from "./tools.ts";
