#!/usr/bin/env python3
"""config-table.py - renders src/config/config_table.h, with the backends'
rows it includes (src/backends/backend_config.h and each backend's
<name>_config.h, followed like the C preprocessor does), as the README's
Markdown table of TELEMEM_* variables (the README block between the
config-table markers must equal this output; tests/lint checks it).
Only TLM_CONFIG( entries that open a line outside comments count, so the
example in the header's comment is not a setting; an entry with a name or
type the C code would not accept is an error, as is one without a range of
the form its type needs, or a README row that is not a well-formed
setting.  scripts/gen-man.py reads the same entries.
Usage: scripts/config-table.py [--check README.md]"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "src/config/config_table.h"
START, END = "<!-- config-table start -->", "<!-- config-table end -->"
# config/config.c's ctype_t: T_SIZE, T_INT, T_BOOL, T_SECONDS, T_STRING,
# T_LOGLEVEL, T_SECRET (the macro pastes T_##type, so no other type
# compiles).
TYPES = ("SIZE", "INT", "BOOL", "SECONDS", "STRING", "LOGLEVEL", "SECRET")
# TLM_CONFIG(NAME, TYPE, "default", "range", "doc"); a row without its
# range still compiles (config/config.c) but is refused here.
ENTRY = re.compile(r'^[ \t]*TLM_CONFIG\(\s*([A-Z][A-Z0-9_]*),\s*([A-Z]+),'
                   r'\s*"([^"]*)",\s*((?:"[^"]*"\s*)+?)'
                   r'(?:,\s*((?:"[^"]*"\s*)+))?\)', re.M)
ROW = re.compile(r'^\| `TELEMEM_[A-Z][A-Z0-9_]*` \| (%s) \| `[^`]*` \| '
                 r'[^|]* \| \S.* \|$'
                 % "|".join(t.lower() for t in TYPES))
BOOL_WORDS = "y, n (also yes/no, 1/0, on/off)"
LEVEL_WORDS = "error, warn, info, debug, trace, data"


def strip_comments(text):
    """C comments out (string literals kept), line breaks kept."""
    def repl(m):
        s = m.group(0)
        return s if s.startswith('"') else "\n" * s.count("\n")
    return re.sub(r'"(?:\\.|[^"\\\n])*"|/\*.*?\*/', repl, text, flags=re.S)


def range_error(typ, rng):
    """Why rng (None: missing) does not fit typ, or None when it does:
    "min..max" for INT, SIZE, SECONDS; "" for BOOL, LOGLEVEL; "a|b",
    "list:a,b" or "*" for STRING and SECRET."""
    if typ in ("BOOL", "LOGLEVEL"):
        return None if rng == "" else "must be \"\" (the type's words)"
    if typ in ("INT", "SIZE", "SECONDS"):
        lo, _, hi = (rng or "").partition("..")
        return None if lo and hi else "must be \"min..max\""
    if rng and ".." not in rng:
        return None
    return "must be \"a|b\", \"list:a,b\" or \"*\""


INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"[^\n]*$', re.M)


def expand(path, depth=0):
    """The text of path with its #include "x/y.h" lines (paths under src/,
    as the library's include path has them) replaced by those files'
    texts, comments out."""
    if depth > 8:
        raise ValueError(f"{path}: includes nested too deep")
    text = strip_comments(Path(path).read_text())

    def repl(m):
        inc = ROOT / "src" / m.group(1)
        if not inc.is_file():
            raise ValueError(f"{path}: includes {m.group(1)}, not in src/")
        return expand(inc, depth + 1)
    return INCLUDE.sub(repl, text)


def entries(path=TABLE):
    """[(NAME, TYPE, default, range, doc)] in table order; ValueError when
    an entry is malformed or repeated, or its range is missing or does not
    fit its type."""
    text = expand(path)
    found = ENTRY.findall(text)
    opened = re.findall(r"^[ \t]*TLM_CONFIG\(", text, flags=re.M)
    if len(opened) != len(found):
        raise ValueError(f"{path}: {len(opened)} TLM_CONFIG entries, "
                         f"{len(found)} well-formed (NAME in capitals, a type "
                         f"of {', '.join(TYPES)}, a quoted default and doc)")
    out, seen = [], set()
    join = lambda t: "".join(re.findall(r'"([^"]*)"', t))
    for name, typ, default, a, b in found:
        if typ not in TYPES:
            raise ValueError(f"{path}: TELEMEM_{name}: unknown type {typ}")
        if name in seen:
            raise ValueError(f"{path}: TELEMEM_{name} declared twice")
        seen.add(name)
        rng, doc = (None, join(a)) if not b else (join(a), join(b))
        err = range_error(typ, rng)
        if err:
            raise ValueError(f"{path}: TELEMEM_{name} ({typ.lower()}): "
                             f"range {rng!r} {err}")
        out.append((name, typ, default, rng, doc))
    return out


def range_text(typ, rng):
    """The range as the README and the man page show it."""
    if rng == "":
        return {"BOOL": BOOL_WORDS, "LOGLEVEL": LEVEL_WORDS}.get(typ, "")
    if rng == "*":
        return "any text"
    if ".." in rng:
        lo, hi = rng.split("..", 1)
        return f"{lo} .. {hi}"
    if rng.startswith("list:"):
        return "comma list of " + ", ".join(rng[5:].split(","))
    return ", ".join(rng.split("|"))


def table():
    rows = ["| Variable | Type | Default | Range | Meaning |",
            "|---|---|---|---|---|"]
    for name, typ, default, rng, doc in entries():
        rows.append(f"| `TELEMEM_{name}` | {typ.lower()} | `{default}` "
                    f"| {range_text(typ, rng)} | {doc} |")
    return "\n".join(rows)


def check(readme_path, t):
    readme = Path(readme_path).read_text()
    try:
        block = readme.split(START, 1)[1].split(END, 1)[0].strip()
    except IndexError:
        print("README has no config-table block", file=sys.stderr)
        return 1
    bad = [r for r in block.splitlines()[2:] if not ROW.match(r)]
    for r in bad:
        print(f"README: not a well-formed setting row: {r}", file=sys.stderr)
    if block != t:
        print("README's TELEMEM_* table differs from src/config/config_table.h;"
              " regenerate it with scripts/config-table.py", file=sys.stderr)
        return 1
    return 1 if bad else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    try:
        t = table()
    except ValueError as e:
        print(f"config-table.py: {e}", file=sys.stderr)
        return 1
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        return check(sys.argv[2], t)
    print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
