// A test receiver on loopback for `hoptrace export --to`: OTLP/HTTP
// (protobuf and JSON) on /v1/traces, Zipkin v2 on /api/v2/spans. OTLP is
// decoded with the protobuf definitions OpenTelemetry JS generates from
// opentelemetry-proto (@opentelemetry/otlp-transformer's root), not with
// anything of hoptrace's. Every span received goes as one JSON line to
// --out; the random port goes to --port-file once listening.
//
//   node receiver.js --port-file F --out F [--fail-first N:STATUS] [--reject N]
//                    [--port P] [--faults F] [--discard 1]
//
// --fail-first: the first N requests get STATUS and a message; --reject:
// every OTLP reply is a partial success rejecting N spans. --port: listen
// there (a receiver restarted on its predecessor's port). --faults: a
// file read at each request whose lines are applied one a request, in
// order, as they are appended (then requests are served normally):
//   503 SECONDS  refused with Retry-After: SECONDS
//   400          refused (the spans go to --out + '.refused')
//   reset        the connection is destroyed before anything is recorded
//   slow MS      answered after MS ms, recorded only if the client waited
//   ok           served normally
// Each applied fault goes as a line to --faults + '.log'. --discard
// (benchmarks): every request is read and answered 200 (an empty OTLP
// response), nothing decoded or recorded.
'use strict';
const fs = require('fs');
const http = require('http');
const zlib = require('zlib');
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root');

const v1 = root.opentelemetry.proto.collector.trace.v1;
const Request = v1.ExportTraceServiceRequest;
const Response = v1.ExportTraceServiceResponse;

const args = {};
for (let i = 2; i < process.argv.length; i += 2)
  args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
let [failLeft, failStatus] = (args['fail-first'] || '0:0').split(':').map(Number);
const reject = Number(args.reject || 0);
const out = fs.openSync(args.out, 'a');
let faultsUsed = 0;

// The next fault line, or null.
function nextFault() {
  if (!args.faults || !fs.existsSync(args.faults)) return null;
  const lines = fs.readFileSync(args.faults, 'utf8').split('\n').filter((l) => l.trim());
  if (faultsUsed >= lines.length) return null;
  const f = lines[faultsUsed++].trim().split(/\s+/);
  fs.appendFileSync(args.faults + '.log', f.join(' ') + '\n');
  return f;
}

const hex = (b) => Buffer.from(b || []).toString('hex');
const toObj = (msg) => Request.toObject(msg, { longs: String, enums: Number, bytes: Array,
                                                 defaults: false, arrays: true });

// OTLP/JSON ids are hex (not protobuf-JSON's base64): to bytes; 64-bit
// integers are decimal strings (proto3 JSON), which fromObject converts
// and verify on the result checks.
function fromJson(doc) {
  for (const rs of doc.resourceSpans || [])
    for (const ss of rs.scopeSpans || [])
      for (const s of ss.spans || [])
        for (const k of ['traceId', 'spanId', 'parentSpanId'])
          if (typeof s[k] === 'string') s[k] = Buffer.from(s[k], 'hex');
  const msg = Request.fromObject(doc);
  const err = Request.verify(msg);
  if (err) throw new Error('not an ExportTraceServiceRequest: ' + err);
  return msg;
}

function anyValue(v) {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return String(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  return null;
}
const attrs = (list) => Object.fromEntries((list || []).map((a) => [a.key, anyValue(a.value)]));

function recordOtlp(msg, encoding, header) {
  const lines = [];
  for (const rs of toObj(msg).resourceSpans || []) {
    const resource = attrs(rs.resource && rs.resource.attributes);
    for (const ss of rs.scopeSpans || [])
      for (const s of ss.spans || [])
        lines.push(JSON.stringify({
          encoding, header, scope: ss.scope && ss.scope.name, resource,
          traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId),
          name: s.name, kind: s.kind || 0, start: String(s.startTimeUnixNano || 0),
          end: String(s.endTimeUnixNano || 0), attributes: attrs(s.attributes),
          events: (s.events || []).map((e) => [String(e.timeUnixNano || 0), e.name]),
          status: { code: (s.status && s.status.code) || 0, message: (s.status && s.status.message) || '' },
        }));
  }
  return lines;
}

// Zipkin v2 is checked against its API (zipkin.js), the OTLP requests
// against OpenTelemetry's definitions above.
function recordZipkin(spans) {
  return spans.map((s) => JSON.stringify({
    encoding: 'zipkin', traceId: s.traceId, spanId: s.id, parentSpanId: s.parentId || '',
    name: s.name, kind: s.kind || '', tags: s.tags || {}, timestamp: s.timestamp,
    duration: s.duration, service: s.localEndpoint && s.localEndpoint.serviceName }));
}

function reply(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const proto = req.headers['content-type'] === 'application/x-protobuf';
    if (args.discard === '1')
      return reply(res, 200, proto ? 'application/x-protobuf' : 'application/json',
                   proto ? '' : '{}');
    if (failLeft > 0) {
      failLeft--;
      return reply(res, failStatus, 'text/plain', 'test receiver refuses this batch');
    }
    const fault = nextFault() || ['ok'];
    if (fault[0] === 'reset') return req.socket.destroy();
    if (fault[0] === '503')
      return res.writeHead(503, { 'Content-Type': 'text/plain', 'Retry-After': fault[1] })
        .end('test receiver is busy');
    if (fault[0] === 'slow') {
      let gone = false;
      res.on('close', () => { gone = true; });
      return setTimeout(() => { if (!gone) serve(req, res, chunks, proto, null); },
                        Number(fault[1]));
    }
    serve(req, res, chunks, proto, fault[0] === '400' ? 400 : null);
  });
});

// Decodes and records the request (or, refuse: records its spans as
// refused and answers with that status).
function serve(req, res, chunks, proto, refuse) {
  try {
    let body = Buffer.concat(chunks);
    if (req.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
    let lines;
    if (req.method === 'POST' && req.url === '/v1/traces')
      lines = proto ? recordOtlp(Request.decode(body), 'protobuf', req.headers['x-test'] || '')
                    : recordOtlp(fromJson(JSON.parse(body)), 'json', req.headers['x-test'] || '');
    else if (req.method === 'POST' && req.url === '/api/v2/spans')
      lines = recordZipkin(require('./zipkin').decode(body)); // loaded when first needed
    else
      return reply(res, 404, 'text/plain', 'no such endpoint ' + req.url);
    if (refuse) {
      if (lines.length) fs.appendFileSync(args.out + '.refused', lines.join('\n') + '\n');
      return reply(res, refuse, 'text/plain', 'test receiver refuses this batch');
    }
    if (lines.length) fs.writeSync(out, lines.join('\n') + '\n');
    if (req.url === '/api/v2/spans') return reply(res, 202, 'text/plain', '');
    const partial = reject ? { partialSuccess: { rejectedSpans: reject, errorMessage: 'test rejects' } } : {};
    if (proto)
      return reply(res, 200, 'application/x-protobuf',
                   Buffer.from(Response.encode(Response.fromObject(partial)).finish()));
    return reply(res, 200, 'application/json', JSON.stringify(reject ?
      { partialSuccess: { rejectedSpans: String(reject), errorMessage: 'test rejects' } } : {}));
  } catch (e) {
    return reply(res, 400, 'text/plain', 'undecodable: ' + e.message);
  }
}
server.listen(Number(args.port || 0), '127.0.0.1', () => {
  fs.writeFileSync(args['port-file'] + '.tmp', String(server.address().port));
  fs.renameSync(args['port-file'] + '.tmp', args['port-file']);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
