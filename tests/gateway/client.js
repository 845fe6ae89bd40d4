// A client nobody here wrote the tracing of: plain Node.js HTTP requests,
// traced by the OpenTelemetry JS SDK (its HTTP instrumentation makes the
// client spans and injects the trace header), exported by its OTLP/HTTP
// exporter (JSON) to --otlp. Per object: PUT, GET, DELETE, GET (404).
// Every --unsampled-every'th request runs under an unsampled remote parent,
// so the SDK's ParentBased sampler records nothing for it and sends
// sampled=0 downstream. One JSON line per request goes to --out.
//
//   node client.js --gateway URL --otlp URL --propagator w3c|b3
//                  --objects N --unsampled-every K --tag T --out FILE [--timeout-ms MS]
'use strict';
const args = {};
for (let i = 2; i < process.argv.length; i += 2)
  args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];

const api = require('@opentelemetry/api');
const { W3CTraceContextPropagator } = require('@opentelemetry/core');
const { B3Propagator, B3InjectEncoding } = require('@opentelemetry/propagator-b3');
const { Resource } = require('@opentelemetry/resources');
const { NodeTracerProvider, BatchSpanProcessor, ParentBasedSampler, AlwaysOnSampler } =
  require('@opentelemetry/sdk-trace-node');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
const crypto = require('crypto');
const fs = require('fs');

const provider = new NodeTracerProvider({
  resource: new Resource({ 'service.name': 'node-client' }),
  sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
});
provider.addSpanProcessor(new BatchSpanProcessor(
  new OTLPTraceExporter({ url: args.otlp.replace(/\/$/, '') + '/v1/traces' })));
provider.register({
  propagator: args.propagator === 'b3'
    ? new B3Propagator({ injectEncoding: B3InjectEncoding.SINGLE_HEADER })
    : new W3CTraceContextPropagator(),
});
// the ids of each request's client span, by its x-test-request header
const ids = new Map();
registerInstrumentations({ instrumentations: [new HttpInstrumentation({
  requestHook: (span, req) => {
    if (typeof req.getHeader !== 'function') return; // incoming: none here
    const k = req.getHeader('x-test-request');
    span.setAttribute('test.request', String(k));
    ids.set(String(k), span.spanContext());
  },
})] });
const http = require('http'); // after the instrumentation: it patches the module

function request(method, path, body, k) {
  return new Promise((resolve, reject) => {
    const req = http.request(args.gateway + path, { method, timeout: Number(args['timeout-ms'] || 10000),
      headers: { 'x-test-request': k, 'content-length': body ? Buffer.byteLength(body) : 0 } },
    (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString(),
                                    traceresponse: res.headers.traceresponse || '' }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body || undefined);
  });
}

async function main() {
  const out = fs.openSync(args.out, 'w');
  const every = Number(args['unsampled-every']);
  let k = 0;
  for (let i = 0; i < Number(args.objects); i++) {
    const path = `/gw-test/${args.tag}-${i}`;
    const body = `object ${args.tag}-${i} ` + 'x'.repeat(i * 37);
    for (const [method, sent] of [['PUT', body], ['GET', ''], ['DELETE', ''], ['GET', '']]) {
      const key = `${args.tag}.${k}`;
      const sampled = (k + 1) % every !== 0;
      let ctx = api.context.active();
      if (!sampled) // an upstream that decided not to record: a remote, unsampled parent
        ctx = api.trace.setSpanContext(ctx, { traceId: crypto.randomBytes(16).toString('hex'),
          spanId: crypto.randomBytes(8).toString('hex'), traceFlags: api.TraceFlags.NONE,
          isRemote: true });
      const res = await api.context.with(ctx, () => request(method, path, sent, key));
      const sc = ids.get(key);
      fs.writeSync(out, JSON.stringify({ key, method, path, sent, status: res.status,
        body: res.body, traceresponse: res.traceresponse, sampled,
        propagator: args.propagator, traceId: sc.traceId, spanId: sc.spanId,
        recorded: (sc.traceFlags & api.TraceFlags.SAMPLED) !== 0 }) + '\n');
      k++;
    }
  }
  await provider.shutdown(); // flushes the batch processor
}
main().catch((e) => { console.error('client:', e); process.exit(1); });
