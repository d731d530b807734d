// k6's `k6/metrics` module over the VU's native metric sink (src/k6/vu.rs).
const native = globalThis.__k6_metrics;

class Metric {
  constructor(kind, name, isTime) {
    this.name = String(name);
    native.declare(this.name, kind, !!isTime);
  }
  add(value, tags) {
    native.add(this.name, Number(value), tags || null);
    return true;
  }
}

export class Counter extends Metric {
  constructor(name, isTime) {
    super("counter", name, isTime);
  }
}
export class Gauge extends Metric {
  constructor(name, isTime) {
    super("gauge", name, isTime);
  }
}
export class Rate extends Metric {
  constructor(name, isTime) {
    super("rate", name, isTime);
  }
  add(value, tags) {
    native.add(this.name, value ? 1 : 0, tags || null);
    return true;
  }
}
export class Trend extends Metric {
  constructor(name, isTime) {
    super("trend", name, isTime);
  }
}

export default { Counter, Gauge, Rate, Trend };
