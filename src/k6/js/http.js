// k6's `k6/http` module over the VU's native request (src/k6/http.rs), which
// hands each request to dbload's own HTTP client.
const native = globalThis.__k6_http;

// k6's response. The native request makes one per request with its values
// in this order: the properties are set here, with names the module's
// compilation made once, and json() is on the prototype, not set on each.
// What most scripts never read is kept in one list and made into its
// property on the first read: res.headers (from the headers as they were
// received, one string), res.timings and res.request; toJSON gives them all.
class Response {
  #lazy;

  constructor(status, url, body, rawHeaders, error, errorCode,
              blocked, connecting, tlsHandshaking, sending, waiting, receiving, duration, method) {
    this.status = status;
    this.url = url;
    this.body = body;
    this.error = error;
    this.error_code = errorCode;
    this.#lazy = [rawHeaders, method, blocked, connecting, tlsHandshaking, sending, waiting, receiving, duration];
  }

  get headers() {
    return own(this, "headers", native.headers(this.#lazy[0]));
  }

  set headers(value) {
    own(this, "headers", value);
  }

  get timings() {
    const t = this.#lazy;
    return own(this, "timings", {
      blocked: t[2], connecting: t[3], tls_handshaking: t[4], sending: t[5], waiting: t[6], receiving: t[7],
      duration: t[8],
    });
  }

  set timings(value) {
    own(this, "timings", value);
  }

  get request() {
    return own(this, "request", { method: this.#lazy[1] });
  }

  set request(value) {
    own(this, "request", value);
  }

  toJSON() {
    return {
      status: this.status, url: this.url, body: this.body, headers: this.headers, error: this.error,
      error_code: this.error_code, timings: this.timings, request: this.request,
    };
  }

  json(selector) {
    const value = JSON.parse(this.body);
    return selector === undefined ? value : select(value, String(selector));
  }
}

// A lazy property of a response, once made or set: its own, as k6's are.
function own(response, name, value) {
  Object.defineProperty(response, name, { value, writable: true, enumerable: true, configurable: true });
  return value;
}

// res.json(selector): k6's path (gjson's syntax) into the parsed body:
// `a.b.0` is the field a, its field b, that array's first element; `\.`
// is a dot in a name; `#` is an array's length, `a.#.b` the b of each of
// a's elements. What is not there is undefined.
function select(value, path) {
  const parts = [];
  let part = "";
  for (let i = 0; i < path.length; i++) {
    if (path[i] === "\\" && i + 1 < path.length) {
      part += path[++i];
    } else if (path[i] === ".") {
      parts.push(part);
      part = "";
    } else {
      part += path[i];
    }
  }
  parts.push(part);
  return walk(value, parts, 0);
}

function walk(value, parts, at) {
  if (at === parts.length) return value;
  if (value === null || typeof value !== "object") return undefined;
  const part = parts[at];
  if (Array.isArray(value) && part === "#") {
    if (at + 1 === parts.length) return value.length;
    return value.map((v) => walk(v, parts, at + 1)).filter((v) => v !== undefined);
  }
  if (!Object.prototype.hasOwnProperty.call(value, part)) return undefined;
  return walk(value[part], parts, at + 1);
}

// A request without params.
const NO_PARAMS = Object.freeze({});

// An object body (not an ArrayBuffer) is sent as a form.
function isForm(body) {
  return body !== null && typeof body === "object" && !(body instanceof ArrayBuffer);
}

// k6 sends an object body as a form, a string as it is.
function encode(body) {
  if (body === undefined || body === null) return null;
  if (typeof body === "string") return body;
  if (body instanceof ArrayBuffer) return body;
  if (typeof body === "object") {
    return Object.keys(body)
      .map((k) => encodeURIComponent(k) + "=" + encodeURIComponent(body[k]))
      .join("&");
  }
  return String(body);
}

// A request of `method` (upper case already): a string body and URL, the
// usual case, go as they are, without the calls that convert the others
// (each JavaScript call costs the VU's CPU on every request).
function send(method, url, body, params) {
  const p = params || NO_PARAMS;
  const text = typeof body === "string";
  return native.request(Response, method, typeof url === "string" ? url : String(url), text ? body : encode(body),
    !text && isForm(body), p.headers, p.timeout, p.tags, p.responseType);
}

export function request(method, url, body, params) {
  return send(String(method).toUpperCase(), url, body, params);
}

// One request of http.batch: a URL (a GET), [method, url, body, params], or
// { method, url, body, params }; as the native batch takes it (the values
// request hands the native request, in a list).
function batched(item) {
  const [method, url, body, params] = typeof item === "string" ? ["GET", item]
    : Array.isArray(item) ? item
    : [item.method || "GET", item.url, item.body, item.params];
  const p = params || NO_PARAMS;
  return [Response, String(method).toUpperCase(), String(url), encode(body), isForm(body),
    p.headers, p.timeout, p.tags, p.responseType];
}

// k6's http.batch: the requests made at once (as k6, each on a connection
// of its own); their responses in a list, or under the same names for an
// object of requests.
export function batch(requests) {
  if (Array.isArray(requests)) return native.batch(requests.map(batched));
  const names = Object.keys(requests);
  const responses = native.batch(names.map((n) => batched(requests[n])));
  const out = {};
  names.forEach((n, i) => { out[n] = responses[i]; });
  return out;
}

export function get(url, params) {
  return send("GET", url, null, params);
}
export function head(url, params) {
  return send("HEAD", url, null, params);
}
export function options(url, body, params) {
  return send("OPTIONS", url, body, params);
}
export function post(url, body, params) {
  return send("POST", url, body, params);
}
export function put(url, body, params) {
  return send("PUT", url, body, params);
}
export function patch(url, body, params) {
  return send("PATCH", url, body, params);
}
export function del(url, body, params) {
  return send("DELETE", url, body, params);
}

export default { request, batch, get, head, options, post, put, patch, del };
