// k6's `k6/data`: each VU builds its own copy of a SharedArray's data (k6
// shares one copy between VUs; here it costs each VU its memory).
export class SharedArray {
  constructor(name, fn) {
    if (typeof fn !== "function") throw new Error("SharedArray(name, fn): fn must be a function that returns an array");
    const data = fn();
    if (!Array.isArray(data)) throw new Error("SharedArray " + name + ": the function must return an array");
    return Object.freeze(data);
  }
}

export default { SharedArray };
