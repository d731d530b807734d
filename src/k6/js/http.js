// k6's `k6/http` module over the VU's native request (src/k6/vu.rs), which
// hands each request to dbload's own HTTP client.
const native = globalThis.__k6_http;

function json(selector) {
  if (selector !== undefined) {
    throw new Error("res.json(selector): selectors are not supported yet; use res.json() and read the field");
  }
  return JSON.parse(this.body);
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

export function request(method, url, body, params) {
  const form = body !== null && typeof body === "object" && !(body instanceof ArrayBuffer);
  const res = native.request(String(method).toUpperCase(), String(url), encode(body), params || null, form);
  res.json = json;
  return res;
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
