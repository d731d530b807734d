// k6's `k6` module over the VU's native functions (src/k6/vu.rs).
const native = globalThis.__k6;

export function check(value, sets, tags) {
  let all = true;
  for (const name of Object.keys(sets || {})) {
    const f = sets[name];
    const ok = !!(typeof f === "function" ? f(value) : f);
    native.checked(name, ok, tags || null);
    all = all && ok;
  }
  return all;
}

export function group(name, fn) {
  native.enterGroup(String(name));
  try {
    return fn();
  } finally {
    native.leaveGroup();
  }
}

export function sleep(seconds) {
  native.sleep(Number(seconds));
}

export function fail(message) {
  throw new Error(message === undefined ? "fail" : String(message));
}

export default { check, group, sleep, fail };
