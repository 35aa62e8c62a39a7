// Preloaded into one executor replica (`node --import`) to skew its clock: Date.now() and
// `new Date()` run TRISTATE_CHAOS_SKEW_MS ahead (or behind, when negative). Timers are untouched.
const skew = Number(process.env.TRISTATE_CHAOS_SKEW_MS || 0);
if (skew) {
  const RealDate = Date;
  const realNow = RealDate.now.bind(RealDate);
  class SkewedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(realNow() + skew);
      else super(...args);
    }
    static now() {
      return realNow() + skew;
    }
  }
  globalThis.Date = SkewedDate;
}
