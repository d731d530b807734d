// k6's `k6/data`. A SharedArray is made once for the whole run (its
// function runs in the first VU that constructs it) and kept once, in
// dbload, as JSON elements: each VU reads them through a read-only,
// array-like view, each read a fresh copy, as in k6.
const isIndex = (p) => typeof p === "string" && /^(0|[1-9][0-9]*)$/.test(p);

export class SharedArray {
  constructor(name, fn) {
    if (typeof name !== "string" || name === "") throw new Error("SharedArray(name, fn): name must be a non-empty string");
    if (typeof fn !== "function") throw new Error("SharedArray(name, fn): fn must be a function that returns an array");
    let handle = __k6_shared.open(name);
    if (handle < 0) {
      const data = fn();
      if (!Array.isArray(data)) throw new Error("SharedArray " + name + ": the function must return an array");
      // undefined has no JSON: k6 keeps it as null too.
      handle = __k6_shared.make(name, data.map((e) => (e === undefined ? "null" : JSON.stringify(e))));
    }
    const length = __k6_shared.length(handle);
    const at = (i) => __k6_shared.get(handle, i);
    const readOnly = () => {
      throw new TypeError("SharedArray " + name + " is read-only");
    };
    return new Proxy([], {
      get(target, p) {
        if (p === "length") return length;
        if (isIndex(p)) return Number(p) < length ? at(Number(p)) : undefined;
        if (p === Symbol.iterator) {
          return function* () {
            for (let i = 0; i < length; i++) yield at(i);
          };
        }
        return Reflect.get(target, p);
      },
      has(target, p) {
        return isIndex(p) ? Number(p) < length : Reflect.has(target, p);
      },
      set: readOnly,
      deleteProperty: readOnly,
      defineProperty: readOnly,
    });
  }
}

export default { SharedArray };
