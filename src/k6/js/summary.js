// k6's jslib k6-summary (https://jslib.k6.io/k6-summary/0.0.2/index.js and
// 0.1.0), built in: there is no network at run time. textSummary renders
// the summary data as dbload prints k6's summary (src/report/k6.rs), in
// the VU that runs handleSummary; colours are not drawn.
const native = globalThis.__k6;

export function textSummary(data, options) {
  const indent = options && options.indent !== undefined ? String(options.indent) : "";
  return native.textSummary(JSON.stringify(data), indent);
}

export default { textSummary };
