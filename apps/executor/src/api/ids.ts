import { ID_PATTERN, ID_RULE_TEXT } from "@tristate/core";
import { z } from "zod";

/** A run or step id, validated by the executor's own rule (so the API answers 400, never a 500). */
export const idSchema = z.string().regex(ID_PATTERN, ID_RULE_TEXT);
