/** The executor's tool catalog for the τ-bench domain service. */
export * from "./identity.ts";
export * from "./settle.ts";
export * from "./tools.ts";
