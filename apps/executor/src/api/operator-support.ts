import { OPERATOR_ACTIONS } from "@tristate/core";
import { z } from "zod";

/** An idempotency key (32 lower-case hex characters). */
export const keySchema = z.string().regex(/^[0-9a-f]{32}$/, "must be 32 lower-case hex characters");

/** An operator action. */
export const operatorActionSchema = z.enum(OPERATOR_ACTIONS);
