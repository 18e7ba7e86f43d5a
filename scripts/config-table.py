#!/usr/bin/env python3
"""config-table.py - renders src/core/config_table.h as the README's
Markdown table of TELEMEM_* variables (the README block between the
config-table markers must equal this output; tests/lint checks it).
Usage: scripts/config-table.py [--check README.md]"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- config-table start -->", "<!-- config-table end -->"


def table():
    text = (ROOT / "src/core/config_table.h").read_text()
    rows = ["| Variable | Type | Default | Meaning |", "|---|---|---|---|"]
    pat = re.compile(r'TLM_CONFIG\(\s*(\w+),\s*(\w+),\s*"([^"]*)",\s*((?:"[^"]*"\s*)+)\)')
    for m in pat.finditer(text):
        name, typ, default, doc = m.groups()
        doc = "".join(re.findall(r'"([^"]*)"', doc))
        rows.append(f"| `TELEMEM_{name}` | {typ.lower()} | `{default}` | {doc} |")
    return "\n".join(rows)


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    t = table()
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        readme = Path(sys.argv[2]).read_text()
        try:
            block = readme.split(START, 1)[1].split(END, 1)[0].strip()
        except IndexError:
            print("README has no config-table block", file=sys.stderr)
            return 1
        if block != t:
            print("README's TELEMEM_* table differs from src/core/config_table.h;"
                  " regenerate it with scripts/config-table.py", file=sys.stderr)
            return 1
        return 0
    print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
