/**
 * Replaying τ-bench tasks through the executor and scoring what they did (for the chaos campaign and
 * other drivers): the task files, the replay itself, effect comparison and status-lie counts.
 */

export * from "./abort-scoring.ts";
export { visibleSplits } from "./cli.ts";
export * from "./replay.ts";
export * from "./scoring.ts";
