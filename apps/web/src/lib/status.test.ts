import { describe, expect, it } from "vitest";
import { actionUnavailable, toolCompensation } from "./status";

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

  it("a tool with neither a compensation nor a corrective says so, whatever the status", () => {
    const tools = [
      { name: "send_email", hasCompensation: false, irreversible: false },
      { name: "refund", hasCompensation: true, irreversible: false },
      { name: "wire", hasCompensation: false, irreversible: true },
    ];
    for (const status of ["SUCCEEDED", "UNKNOWN"]) {
      expect(actionUnavailable("compensate", { status, ...toolCompensation(tools, "send_email") })).toMatch(
        /declares no compensation/,
      );
    }
    expect(actionUnavailable("compensate", { status: "SUCCEEDED", ...toolCompensation(tools, "refund") })).toBeNull();
    expect(actionUnavailable("compensate", { status: "UNKNOWN", ...toolCompensation(tools, "refund") })).toMatch(
      /settle this one first/,
    );
    // an irreversible tool may declare a corrective action (tools.list does not say): not refused as "none"
    expect(actionUnavailable("compensate", { status: "SUCCEEDED", ...toolCompensation(tools, "wire") })).toBeNull();
    // tools not loaded yet: the status rule alone
    expect(actionUnavailable("compensate", { status: "UNKNOWN", ...toolCompensation(undefined, "x") })).toMatch(
      /settle this one first/,
    );
  });
});
