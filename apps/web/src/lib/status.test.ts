import { describe, expect, it } from "vitest";
import { actionUnavailable } from "./status";

describe("actionUnavailable", () => {
  it("never offers 'it did not happen' or a resend for a confirmed effect waiting in the queue; confirming it is offered", () => {
    const succeeded = { status: "SUCCEEDED", resendAllowed: false, resendRefusal: "the record is not waiting" };
    expect(actionUnavailable("confirm_no_effect", succeeded)).toMatch(/confirmed/);
    expect(actionUnavailable("resend_same_key", succeeded)).not.toBeNull();
    expect(actionUnavailable("confirm_effect", succeeded)).toBeNull();
    expect(actionUnavailable("compensate", succeeded)).toBeNull();
  });

  it("an UNKNOWN may be settled either way but not compensated (rule 6)", () => {
    const unknown = { status: "UNKNOWN", resendAllowed: true, resendRefusal: null };
    expect(actionUnavailable("confirm_no_effect", unknown)).toBeNull();
    expect(actionUnavailable("confirm_effect", unknown)).toBeNull();
    expect(actionUnavailable("compensate", unknown)).toMatch(/confirmed effect/);
  });
});
