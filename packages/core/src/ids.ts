/**
 * Run and step ids: 1–200 printable ASCII characters, no spaces (they become part of keys, logs and
 * URLs). One rule, used by the executor and by the service's input schemas.
 */
export const ID_PATTERN = /^[\x21-\x7e]{1,200}$/;

/** The rule, in words, for error messages. */
export const ID_RULE_TEXT = "must be 1–200 printable ASCII characters without spaces";
