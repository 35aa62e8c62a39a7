/** Shown instead of a secret value. */
export const MASK = "••••";

const SECRET_FIELD = /pass(word)?|token|secret|card|iban|ssn|api[-_]?key|cvv|cvc|pin$/i;

/** True when a field's name says it holds a secret (password, token, secret, card, IBAN, SSN…). */
export function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name);
}

/** A copy of a JSON value with the values of secret-looking fields replaced by {@link MASK}, at any depth. */
export function maskSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, isSecretField(k) && v !== null ? MASK : maskSecrets(v)]),
    );
  }
  return value;
}
