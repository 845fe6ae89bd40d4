"""babeltrace2's text output of hoptrace events, as named fields.

parse_fields('a = 1, b = "x, y", at = [ [0] = 0x1, ... ]') gives pairs
(key, text), integers in decimal, strings with their quotes, and the
schema's arrays (src/provider/hoptrace_schema.h) spread into the
fields they hold, in the order ids/at, side, marks: `at` becomes
trace_id_hi, trace_id_lo, span_id, parent_span_id, start; `side` (its
words packed: [desc | peer << 16, vpid, vtid | flags << 24, status])
desc, peer, flags, vpid, vtid (and status, as a signed 32-bit number);
`rec` (schema 3's span: side's words two by two, the low half first,
then at) both, status included, and span_k's 12-word rec its key and
value too (as the fields key and value that span_k first had); `marks`
cs, sr, ss, cr. Keys starting
with "_" are dropped. A root whose flags carry ROOT_P (0x10) holds its
sampling probability * 2^32 where its parent would be: it comes out as
parent_span_id 0 and root_prob.
"""
import re

ARRAYS = {
    "ids": ("trace_id_hi", "trace_id_lo", "span_id", "parent_span_id"),
    "at": ("trace_id_hi", "trace_id_lo", "span_id", "parent_span_id", "start"),
    "side": ("names", "vpid", "vtid_flags", "status"),
    "marks": ("cs", "sr", "ss", "cr"),
}
ORDER = ("ids", "at", "side", "marks")
ROOT_P = 0x10  # hoptrace_schema.h HT_SCHEMA_FLAG_ROOT_P
KEY = re.compile(r"\s*(\w+) = ")
WORD = re.compile(r"-?\w+")


def number(text):
    return str(int(text, 16)) if text.startswith("0x") else text


def spread(key, items):
    names = ARRAYS[key]
    if len(items) > len(names):
        raise ValueError("%s has %d elements, the schema %d" % (key, len(items), len(names)))
    words = dict(zip(names, (int(v) for v in items)))
    if key != "side":
        return [(k, str(v)) for k, v in words.items()]
    out = [("desc", words["names"] & 0xffff), ("peer", words["names"] >> 16),
           ("flags", words["vtid_flags"] >> 24), ("vpid", words["vpid"]),
           ("vtid", words["vtid_flags"] & 0xffffff)]
    if "status" in words:
        s = words["status"]
        out.append(("status", s - (1 << 32) if s >= 1 << 31 else s))
    return [(k, str(v)) for k, v in out]


def rec_key_value(items):
    """span_k's value (word 7, signed) and key (words 8-11, its bytes
    little-endian, NUL-padded) as fields."""
    raw = b"".join(int(w).to_bytes(8, "little") for w in items[8:12])
    if b"\0" not in raw:
        raise ValueError("span_k's key has no NUL in its %d bytes" % len(raw))
    key = raw[:raw.index(b"\0")].decode("utf-8", "backslashreplace")
    value = int(items[7]) - (1 << 64) if int(items[7]) >= 1 << 63 else int(items[7])
    return [("key", '"%s"' % key.replace("\\", "\\\\").replace('"', '\\"')),
            ("value", str(value))]


def rec_arrays(items):
    """A span's rec as the side and at it packs (and span_k's key-value,
    fields of their own)."""
    if len(items) not in (7, 12):
        raise ValueError("rec has %d elements, the schema 7 or 12" % len(items))
    w0, w1 = int(items[0]), int(items[1])
    side = [str(w0 & 0xffffffff), str(w0 >> 32), str(w1 & 0xffffffff), str(w1 >> 32)]
    kv = rec_key_value(items) if len(items) == 12 else []
    return spread("side", side), spread("at", items[2:7]), kv


def parse_fields(text):
    plain, arrays, i, n = [], {}, 0, len(text)
    while i < n:
        m = KEY.match(text, i)
        if not m:
            raise ValueError("cannot parse fields at: " + text[i:])
        key, i = m.group(1), m.end()
        if text[i] == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            value, i = text[i:j + 1], j + 1
        elif text[i] == "[":
            j = text.index(" ]", i)
            items = [number(v) for v in re.findall(r"\[\d+\] = (-?\w+)", text[i:j])]
            value, i = items, j + 2
        else:
            m = WORD.match(text, i)
            value, i = number(m.group(0)), m.end()
        if text.startswith(",", i):
            i += 1
        if key.startswith("_"):
            continue
        if key == "rec" and isinstance(value, list):
            arrays["side"], arrays["at"], kv = rec_arrays(value)
            plain.extend(kv)
        elif key in ARRAYS and isinstance(value, list):
            arrays[key] = spread(key, value)
        else:
            plain.append((key, "[" + ",".join(value) + "]" if isinstance(value, list) else value))
    if "at" in arrays and "side" in arrays and int(dict(arrays["side"])["flags"]) & ROOT_P:
        arrays["at"] = [("parent_span_id", "0") if k == "parent_span_id" else (k, v)
                        for k, v in arrays["at"]] + [("root_prob", dict(arrays["at"])["parent_span_id"])]
    spread_first = [p for k in ORDER if k in arrays for p in arrays[k]]
    return spread_first + plain
