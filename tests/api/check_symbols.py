#!/usr/bin/env python3
"""The library surface: what the public headers declare is what the
libraries define, nothing more.

  check_symbols.py --nm NM --shared LIBHOPTRACE_SO --static LIBHOPTRACE_A
                   --allow STATIC_GLOBALS_TXT HEADER_DIR...

1. Every function declared in HEADER_DIR/*.h (include/hoptrace/ and the
   generated build/include/hoptrace/) carries HT_API; static inline
   helpers are not functions of the library.
2. `nm -D --defined-only` of the shared library lists exactly those
   functions: nothing public missing, nothing extra exported.
3. The static library's global symbols not prefixed ht_ are printed and
   must all be in the allow-list (today's names): the list may shrink,
   never grow. Symbols added by sanitizer instrumentation are ignored.
Exit 0 when all hold, 1 otherwise.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

# Instrumentation a sanitizer or coverage build adds to every object.
TOOLCHAIN_PREFIXES = ("__odr_asan", "__asan_", "__ubsan_", "__sancov_",
                      "__tsan_", "__msan_", "__llvm_", "__gcov_")


def strip_c(text):
    """Comments, string literals and preprocessor lines removed."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    return text


def header_functions(dirs):
    """(declared with HT_API, declared without it) over every header."""
    api, bare = {}, {}
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.h"))):
            code = strip_c(open(path, encoding="utf-8").read())
            inline = set(re.findall(
                r"\bstatic\s+inline\b[^;{}]*?\b(ht_\w+)\s*\(", code))
            # Each top-level declaration: the text since the last ; { or }.
            for m in re.finditer(r"[^;{}]*?\b(ht_\w+)\s*\([^;{}]*[;{]", code):
                decl, name = m.group(0), m.group(1)
                head = decl[:decl.index(name)]
                if name in inline or re.search(r"\btypedef\b", head):
                    continue
                if "(" in head:  # a function pointer or a call, not a prototype
                    continue
                where = os.path.basename(path)
                if re.search(r"\bHT_API\b", head):
                    api.setdefault(name, where)
                else:
                    bare.setdefault(name, where)
    return api, bare


def nm(tool, *args):
    out = subprocess.run([tool, *args], check=True, capture_output=True,
                         text=True).stdout
    syms = set()
    for line in out.splitlines():
        f = line.split()
        # "ADDR TYPE NAME" (archive member headers and blank lines skipped)
        if len(f) == 3 and len(f[1]) == 1:
            syms.add(f[2].split("@")[0])
    return syms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--shared", required=True)
    ap.add_argument("--static", required=True)
    ap.add_argument("--allow", required=True)
    ap.add_argument("headers", nargs="+")
    a = ap.parse_args()
    ok = True

    api, bare = header_functions(a.headers)
    print(f"public headers: {len(api)} functions declared with HT_API")
    for name in sorted(bare):
        print(f"FAIL: {name} ({bare[name]}) is declared without HT_API")
        ok = False
    if not api:
        print("FAIL: no HT_API declaration found (wrong header directory?)")
        ok = False

    exported = nm(a.nm, "-D", "--defined-only", a.shared)
    print(f"{os.path.basename(a.shared)}: {len(exported)} exported symbols")
    for name in sorted(set(api) - exported):
        print(f"FAIL: {name} ({api[name]}) is not exported")
        ok = False
    for name in sorted(exported - set(api)):
        print(f"FAIL: {name} is exported but no public header declares it")
        ok = False

    globals_ = nm(a.nm, "-g", "--defined-only", a.static)
    # one per event of provider `hoptrace`, named by lttng-ust's and
    # sys/sdt.h's macros: in the provider's namespace, and as many as the
    # schema has events
    generated = re.compile(r"^(lttng_ust_tracepoint_hoptrace___\w+|hoptrace_\w+_semaphore)$")
    unprefixed = sorted(s for s in globals_ if not s.startswith("ht_")
                        and not s.startswith(TOOLCHAIN_PREFIXES)
                        and not generated.match(s))
    allowed = set()
    for line in open(a.allow, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line:
            allowed.add(line)
    print(f"{os.path.basename(a.static)}: {len(globals_)} global symbols, "
          f"{len(unprefixed)} without the ht_ prefix:")
    for name in unprefixed:
        print(f"  {name}{'' if name in allowed else '   <- NEW'}")
    new = [s for s in unprefixed if s not in allowed]
    if new:
        print(f"FAIL: {len(new)} new global(s) without the ht_ prefix; "
              f"name them ht_<layer>_... (or make them static). "
              f"{os.path.basename(a.allow)} only lists the old ones "
              f"and may only shrink.")
        ok = False
    gone = sorted(allowed - set(unprefixed))
    if gone:
        print(f"note: no longer defined, delete from "
              f"{os.path.basename(a.allow)} (unless another configuration "
              f"still defines them): " + " ".join(gone))

    print("api symbols: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
