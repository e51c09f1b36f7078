// Drives `vkit mcp` with the official MCP TypeScript SDK client and prints
// what happened as one JSON report on stdout; tests/mcp_e2e_spec.lua asserts
// on it.  Usage: node client.mjs CONFIG.json
//
// CONFIG: {vkit, project, scenario: "certify" | "verify", env?,
//          certify: {request, trusted_target}, vac: {valid, refused},
//          verify: {component}}
//
// Every line the server writes is also tapped raw (beside the SDK's own
// reader), so the report can show that stdout carried nothing but JSON-RPC
// messages and what the server answered to input the SDK would never send
// (bad JSON, a huge line, bad ids), which the harness writes straight to
// the server's stdin within the same session.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import Ajv2020 from "ajv/dist/2020.js";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const report = { sdk: { latest: LATEST_PROTOCOL_VERSION, supported: SUPPORTED_PROTOCOL_VERSIONS }, steps: {},
                 raw_lines: [], not_jsonrpc: [], client_errors: [] };

// --- the raw tap -----------------------------------------------------------
const pending = [];      // lines not yet consumed by nextLine()
const waiters = [];
let partial = "";
function tap(chunk) {
  partial += chunk.toString("utf8");
  let i;
  while ((i = partial.indexOf("\n")) >= 0) {
    const line = partial.slice(0, i);
    partial = partial.slice(i + 1);
    report.raw_lines.push(line.length > 2000 ? line.slice(0, 2000) + "..." : line);
    let ok = false;
    try {
      const m = JSON.parse(line);
      ok = m !== null && typeof m === "object" && (Array.isArray(m) || m.jsonrpc === "2.0");
    } catch { ok = false; }
    if (!ok) report.not_jsonrpc.push(line);
    const w = waiters.shift();
    if (w) w(line); else pending.push(line);
  }
}
function nextLine(ms = 20000) {
  if (pending.length) return Promise.resolve(pending.shift());
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      const k = waiters.indexOf(done);
      if (k >= 0) waiters.splice(k, 1);
      reject(new Error(`no line from the server within ${ms} ms`));
    }, ms);
    function done(line) { clearTimeout(timer); resolve(line); }
    waiters.push(done);
  });
}

// --- helpers ---------------------------------------------------------------
async function step(name, fn) {
  try {
    report.steps[name] = { ok: true, value: await fn() };
  } catch (e) {
    report.steps[name] = { ok: false, error: { code: e.code ?? null, message: String(e.message ?? e) } };
  }
  return report.steps[name];
}

let progressCount = 0;
async function call(name, args, options = {}) {
  const r = await client.callTool({ name, arguments: args }, undefined, options);
  return { isError: r.isError ?? false, structured: r.structuredContent ?? null,
           text: (r.content ?? []).map(c => c.text) };
}

// Writes one raw line (a string or bytes) and returns the server's next
// line, parsed.
async function raw(line, expectAnswer = true) {
  const stdin = proc.stdin;
  const bytes = Buffer.concat([Buffer.isBuffer(line) ? line : Buffer.from(line, "utf8"), Buffer.from("\n")]);
  await new Promise(resolve => (stdin.write(bytes) ? resolve() : stdin.once("drain", resolve)));
  if (!expectAnswer) return null;
  return JSON.parse(await nextLine());
}

// --- the session -----------------------------------------------------------
const env = {};
for (const k of ["ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"]) if (process.env[k]) env[k] = process.env[k];
Object.assign(env, config.env ?? {});
const transport = new StdioClientTransport({
  command: config.vkit, args: ["mcp", "--project", config.project], env, stderr: "pipe",
});
let stderr = "";
transport.stderr.on("data", d => { stderr += d.toString("utf8"); });
let proc;
const start = transport.start.bind(transport);
transport.start = async () => {
  await start();
  proc = transport._process;          // the SDK's child process: tapped, and written to raw
  proc.stdout.on("data", tap);
};
const client = new Client({ name: "vkit-e2e", version: "1.0.0" });
client.onerror = e => report.client_errors.push(String(e.message ?? e));

await client.connect(transport);
report.server = { version: client.getServerVersion(), capabilities: client.getServerCapabilities(),
                  instructions: client.getInstructions() };
report.initialize = JSON.parse(report.raw_lines[0]);

await step("ping", () => client.ping());
await step("tools", async () => {
  const { tools } = await client.listTools();
  const strict = new Ajv2020({ strict: true, allErrors: true });
  const sdk = new AjvJsonSchemaValidator();
  return tools.map(t => {
    const checks = {};
    for (const key of ["inputSchema", "outputSchema"]) {
      try {
        strict.compile(t[key]);
        sdk.getValidator(t[key]);
        checks[key] = "ok";
      } catch (e) { checks[key] = String(e.message ?? e); }
    }
    return { name: t.name, title: t.title ?? null, annotations: t.annotations ?? null,
             inputSchema: t.inputSchema, outputSchema: t.outputSchema ?? null, checks };
  });
});

const withProgress = { onprogress: () => { progressCount++; }, resetTimeoutOnProgress: true, timeout: 90000 };

if (config.scenario === "certify") {
  const { request, trusted_target } = config.certify;
  const queued = await step("certify", () => call("change_certify", { request, trusted_target_oid: trusted_target }));
  const id = queued.ok ? queued.value.structured?.run_id : undefined;
  await step("wait", async () => {
    const seen = [];
    for (let i = 0; i < 10; i++) {
      const r = await call("run_wait", { run_id: id, wait: 15 }, withProgress);
      seen.push(r.structured?.status);
      if (["done", "failed", "cancelled"].includes(r.structured?.status)) return { ...r, seen, progress: progressCount };
    }
    return { seen, progress: progressCount };
  });
  await step("get", () => call("run_get", { run_id: id }));
  await step("list", () => call("run_list", {}));
  await step("report_md", () => call("run_report", { run_id: id }));
  await step("report_junit", () => call("run_report", { run_id: id, format: "junit" }));
  await step("report_json", () => call("run_report", { run_id: id, format: "json" }));
  await step("target_not_commit", () => call("change_certify", { request, trusted_target_oid: "main" }));
  await step("request_invalid", () => call("change_certify", { request: { schema_version: 1 },
                                                                trusted_target_oid: trusted_target }));
  await step("list_after_refusals", () => call("run_list", {}));
  await step("wait_zero", () => call("run_wait", { run_id: id, wait: 0 }));
  await step("blocked", () => call("change_certify", { request, trusted_target_oid: trusted_target,
                                                         method: "rust_kani", wait: 30 }, withProgress));
  // Runs named as `vkit run` names them (two runs now: the certification and the blocked one).
  const tail = id ? id.slice(id.lastIndexOf("-") + 1, id.lastIndexOf("-") + 9) : undefined;
  await step("get_tail_prefix", () => call("run_get", { run_id: tail }));
  await step("wait_prefix", () => call("run_wait", { run_id: id ? id.slice(0, -3) : undefined, wait: 0 }));
  await step("report_tail_prefix", () => call("run_report", { run_id: tail, format: "json" }));
  await step("get_latest", () => call("run_get", { run_id: "latest" }));
  await step("get_ambiguous", () => call("run_get", { run_id: "r-" }));
  await step("wait_unknown_name", () => call("run_wait", { run_id: "zz", wait: 0 }));
  await step("vac_valid", () => call("vac_verify", { bundle: config.vac.valid }));
  await step("vac_refused", () => call("vac_verify", { bundle: config.vac.refused }));
  await step("vac_missing", () => call("vac_verify", { bundle: "no/such/bundle" }));
  await step("verify_no_manifest", () => call("verify", { component: "bvadd" }));
  // Input the SDK lets a caller send: tool execution errors, or -32602.
  await step("unknown_tool", () => call("no_such_tool", {}));
  await step("missing_arguments", () => call("change_certify", {}));
  await step("no_arguments", () => client.callTool({ name: "run_get" }).then(r => ({ isError: r.isError ?? false,
                                                                                      text: r.content.map(c => c.text) })));
  await step("wrong_types", () => call("run_wait", { run_id: 7, wait: "soon" }));
  await step("wait_out_of_range", () => call("run_wait", { run_id: id, wait: 61 }));
  await step("unknown_property", () => call("run_get", { run_id: id, verbose: true }));
  await step("bad_method", () => call("change_certify", { request, trusted_target_oid: trusted_target, method: "guess" }));
  await step("unknown_run", () => call("run_get", { run_id: "r-20000101T000000Z-000000000000" }));
  // Input only a broken client sends, written raw into the same session.
  const huge = '{"jsonrpc":"2.0","id":"raw-huge","method":"ping","params":{"pad":"' + "x".repeat(5 * 1024 * 1024) + '"}}';
  pending.length = 0;                 // the SDK's own answers so far
  await step("raw", async () => ({
    bad_json: await raw('{"jsonrpc": "2.0", "id": "raw-1", "method": '),
    not_utf8: await raw(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"raw-2","method":"ping","params":{"x":"'),
                                       Buffer.from([0xff]), Buffer.from('"}}')])),
    huge: await raw(huge),
    after_huge: await raw('{"jsonrpc":"2.0","id":"raw-after-huge","method":"ping"}'),
    not_object: await raw('"just a string"'),
    no_jsonrpc: await raw('{"id":"raw-3","method":"ping"}'),
    wrong_jsonrpc: await raw('{"jsonrpc":"1.0","id":"raw-4","method":"ping"}'),
    null_id: await raw('{"jsonrpc":"2.0","id":null,"method":"ping"}'),
    float_id: await raw('{"jsonrpc":"2.0","id":1.5,"method":"ping"}'),
    object_id: await raw('{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}'),
    method_not_string: await raw('{"jsonrpc":"2.0","id":"raw-5","method":42}'),
    unknown_method: await raw('{"jsonrpc":"2.0","id":"raw-6","method":"resources/list"}'),
    params_array: await raw('{"jsonrpc":"2.0","id":"raw-7","method":"tools/list","params":[1]}'),
    call_without_name: await raw('{"jsonrpc":"2.0","id":"raw-8","method":"tools/call","params":{}}'),
    arguments_array: await raw('{"jsonrpc":"2.0","id":"raw-9","method":"tools/call","params":{"name":"run_get","arguments":[1]}}'),
    bad_cursor: await raw('{"jsonrpc":"2.0","id":"raw-10","method":"tools/list","params":{"cursor":"x"}}'),
    reinitialize: await raw('{"jsonrpc":"2.0","id":"raw-11","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}'),
    batch: await raw('[{"jsonrpc":"2.0","id":"raw-12","method":"ping"}]'),
    notification_then_ping: (await raw('{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}', false),
                             await raw('{"jsonrpc":"2.0","id":"raw-after-notification","method":"ping"}')),
    pending_after: pending.length,
  }));
  // Still serving, through the SDK.
  await step("ping_after", () => client.ping());
  await step("get_after", () => call("run_get", { run_id: id }));
} else if (config.scenario === "verify") {
  const queued = await step("verify", () => call("verify", { component: config.verify.component, wait: 45 }, withProgress));
  const id = queued.ok ? queued.value.structured?.runs?.[0]?.run_id : undefined;
  await step("wait", () => call("run_wait", { run_id: id, wait: 45 }, withProgress));
  await step("unknown_component", () => call("verify", { component: "nope" }));
}

report.progress_notifications = progressCount;
await client.close();
report.exit = { code: proc.exitCode, signal: proc.signalCode };
report.stderr = stderr;
process.stdout.write(JSON.stringify(report) + "\n");
