// k6's `k6/http` module over the VU's native request (src/k6/vu.rs), which
// hands each request to dbload's own HTTP client.
const native = globalThis.__k6_http;

// k6's response. The native request makes one per request with its values
// in this order: the properties are set here, with names the module's
// compilation made once, and json() is on the prototype, not set on each.
class Response {
  constructor(status, url, body, headers, error, errorCode,
              blocked, connecting, tlsHandshaking, sending, waiting, receiving, duration, method) {
    this.status = status;
    this.url = url;
    this.body = body;
    this.headers = headers;
    this.error = error;
    this.error_code = errorCode;
    this.timings = {
      blocked, connecting, tls_handshaking: tlsHandshaking, sending, waiting, receiving, duration,
    };
    this.request = { method };
  }

  json(selector) {
    if (selector !== undefined) {
      throw new Error("res.json(selector): selectors are not supported yet; use res.json() and read the field");
    }
    return JSON.parse(this.body);
  }
}

// A request without params.
const NO_PARAMS = Object.freeze({});

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

export function request(method, url, body, params) {
  const form = body !== null && typeof body === "object" && !(body instanceof ArrayBuffer);
  const p = params || NO_PARAMS;
  return native.request(Response, String(method).toUpperCase(), String(url), encode(body), form,
    p.headers, p.timeout, p.tags);
}

export function get(url, params) {
  return request("GET", url, null, params);
}
export function head(url, params) {
  return request("HEAD", url, null, params);
}
export function options(url, body, params) {
  return request("OPTIONS", url, body, params);
}
export function post(url, body, params) {
  return request("POST", url, body, params);
}
export function put(url, body, params) {
  return request("PUT", url, body, params);
}
export function patch(url, body, params) {
  return request("PATCH", url, body, params);
}
export function del(url, body, params) {
  return request("DELETE", url, body, params);
}

export default { request, get, head, options, post, put, patch, del };
