// Zipkin v2 span JSON (POST /api/v2/spans), checked against the Zipkin v2
// API (openzipkin/zipkin-api zipkin2-api.yaml: definitions Span,
// Endpoint, Annotation, Tags): a list of spans; traceId 16 or 32 and id,
// parentId 16 lower-case hex digits; kind one of the four; timestamp and
// duration integers (microseconds, duration >= 1); endpoints with string
// serviceName, ipv4/ipv6 addresses and a positive integer port;
// annotations {timestamp, value}; tags string to string. A violation
// throws, naming the span and the field.
'use strict';
const net = require('net');

const KINDS = ['CLIENT', 'SERVER', 'PRODUCER', 'CONSUMER'];
const HEX = (n) => new RegExp(`^[a-f0-9]{${n}}$`);

function check(ok, where, what) {
  if (!ok) throw new Error(`Zipkin v2: ${where}: ${what}`);
}
const isInt = (v) => Number.isSafeInteger(v);

function endpoint(e, where) {
  if (e === undefined) return;
  check(e && typeof e === 'object' && !Array.isArray(e), where, 'not an Endpoint object');
  if (e.serviceName !== undefined) check(typeof e.serviceName === 'string', where, 'serviceName');
  if (e.ipv4 !== undefined) check(net.isIPv4(e.ipv4), where, 'ipv4 ' + e.ipv4);
  if (e.ipv6 !== undefined) check(net.isIPv6(e.ipv6), where, 'ipv6 ' + e.ipv6);
  if (e.port !== undefined) check(isInt(e.port) && e.port > 0 && e.port < 65536, where, 'port');
}

function span(s, i) {
  let where = `span ${i}`;
  check(s && typeof s === 'object' && !Array.isArray(s), where, 'not a Span object');
  check(typeof s.traceId === 'string' && /^([a-f0-9]{16}|[a-f0-9]{32})$/.test(s.traceId), where,
        'traceId ' + s.traceId);
  check(typeof s.id === 'string' && HEX(16).test(s.id), where, 'id ' + s.id);
  where = `span ${s.traceId}/${s.id}`;
  if (s.parentId !== undefined)
    check(typeof s.parentId === 'string' && HEX(16).test(s.parentId), where, 'parentId');
  if (s.name !== undefined) check(typeof s.name === 'string', where, 'name');
  if (s.kind !== undefined) check(KINDS.includes(s.kind), where, 'kind ' + s.kind);
  if (s.timestamp !== undefined) check(isInt(s.timestamp) && s.timestamp > 0, where, 'timestamp');
  if (s.duration !== undefined) check(isInt(s.duration) && s.duration >= 1, where, 'duration');
  for (const k of ['debug', 'shared'])
    if (s[k] !== undefined) check(typeof s[k] === 'boolean', where, k);
  endpoint(s.localEndpoint, where + ' localEndpoint');
  endpoint(s.remoteEndpoint, where + ' remoteEndpoint');
  if (s.annotations !== undefined) {
    check(Array.isArray(s.annotations), where, 'annotations');
    for (const a of s.annotations)
      check(a && isInt(a.timestamp) && typeof a.value === 'string', where, 'annotation');
  }
  if (s.tags !== undefined) {
    check(s.tags && typeof s.tags === 'object' && !Array.isArray(s.tags), where, 'tags');
    for (const [k, v] of Object.entries(s.tags)) check(typeof v === 'string', where, 'tag ' + k);
  }
  return s;
}

// The request body's spans, checked.
function decode(body) {
  const doc = JSON.parse(body);
  check(Array.isArray(doc), 'request', 'not a list of spans');
  return doc.map(span);
}

module.exports = { decode };
