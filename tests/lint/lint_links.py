#!/usr/bin/env python3
"""lint_links.py - the user-facing pages point at nothing that is gone:
every relative link and image of README.md, docs/*.md and
docs/results/README.md names a file or directory of the tree, and every
path under docs/results/ written in their text exists, unless written as a
git object (`git show <commit>:docs/results/...`, a run kept in git
history: then it must exist in the repository when the tree is a clone)
or named in the same paragraph as such an object.
Usage: lint_links.py SOURCE_ROOT"""
import glob
import os
import re
import subprocess
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
os.chdir(root)
pages = ["README.md"] + sorted(glob.glob("docs/*.md"))
if os.path.exists("docs/results/README.md"):
    pages.append("docs/results/README.md")
clone = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"],
                       capture_output=True, text=True).stdout.strip() == "true"

LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML = re.compile(r"<(?:img|a)\b[^>]*?\b(?:src|href)\s*=\s*\"([^\"]+)\"", re.I)
RESULTS = re.compile(r"(?:\b([0-9a-f]{7,40})(\^*):)?(docs/results/[^\s()\[\]`'\"<>,;]*)")
bad = 0
objects = []  # (where, "commit:path") of the runs cited from git history


def say(msg):
    global bad
    print(msg)
    bad = 1


for page in pages:
    text = open(page, encoding="utf-8").read()
    text = re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.M | re.S)  # no links in code blocks
    base = os.path.dirname(page)
    no = 1
    for para in re.split(r"(\n[ \t]*\n)", text):
        if not para.strip():
            no += para.count("\n")
            continue
        found = [(no + para.count("\n", 0, m.start()), m)
                 for m in RESULTS.finditer(para)]
        in_git = [m.group(3).rstrip(".:/") for _, m in found if m.group(1)]
        for line, m in found:
            commit, carets, path = m.group(1), m.group(2), m.group(3)
            path = path.rstrip(".:")
            if commit:
                objects.append((f"{page}:{line}",
                                f"{commit}{carets}:{path.rstrip('/')}"))
            elif not os.path.exists(path) and not any(
                    g == path.rstrip("/") or g.startswith(path.rstrip("/") + "/")
                    for g in in_git):
                say(f"{page}:{line}: {path} is not in the tree (cite the run "
                    f"from git history: `git show <commit>:{path}`)")
        for m in list(LINK.finditer(para)) + list(HTML.finditer(para)):
            target = m.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I) or \
                    target.startswith("#"):
                continue  # http:, mailto:, an anchor of this page
            path = os.path.normpath(os.path.join(base, target.split("#")[0]))
            if not os.path.exists(path):
                line = no + para.count("\n", 0, m.start())
                say(f"{page}:{line}: dead link {target}")
        no += para.count("\n")
if clone and objects:  # one git process for all of them
    out = subprocess.run(["git", "cat-file", "--batch-check"],
                         input="".join(o + "\n" for _, o in objects),
                         capture_output=True, text=True).stdout.split("\n")
    for (where, obj), ans in zip(objects, out):
        if ans.endswith(" missing"):
            say(f"{where}: {obj} is not in git")
if bad:
    print("lint_links: fix the links above (docs/results/README.md lists "
          "the runs kept in the tree)")
sys.exit(bad)
