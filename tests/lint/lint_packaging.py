#!/usr/bin/env python3
"""lint_packaging.py - the Spack recipe (packaging/spack/package.py) agrees
with the tree: its homepage is debian/control's Homepage and
debian/copyright's Source (one address, changed in the three together),
its git address is that homepage's, its url ends in the tarball `meson
dist` names (<project>-<version>.tar.xz, from meson.build), and each of
its variants and meson arguments is an option of meson_options.txt.
Usage: lint_packaging.py SOURCE_ROOT"""
import os
import re
import sys

os.chdir(sys.argv[1] if len(sys.argv) > 1 else ".")
recipe = open("packaging/spack/package.py").read()
bad = 0


def say(msg):
    global bad
    print(msg)
    bad = 1


def field(text, pattern, where):
    m = re.search(pattern, text, re.M)
    if not m:
        say(f"{where}: no match for {pattern}")
        return None
    return m.group(1).strip()


home = field(recipe, r'^\s*homepage\s*=\s*"([^"]+)"', "package.py")
git = field(recipe, r'^\s*git\s*=\s*"([^"]+)"', "package.py")
url = field(recipe, r'^\s*url\s*=\s*"([^"]+)"', "package.py")
control = field(open("debian/control").read(), r"^Homepage:(.*)$",
                "debian/control")
source = field(open("debian/copyright").read(), r"^Source:(.*)$",
               "debian/copyright")
for name, value in (("debian/control Homepage", control),
                    ("debian/copyright Source", source)):
    if home and value and value != home:
        say(f"package.py homepage {home} is not {name} {value}")
if home and git and git != home + ".git":
    say(f"package.py git {git} is not the homepage's ({home}.git)")
project = field(open("meson.build").read(), r"project\('([^']+)'",
                "meson.build")
if url and project and not re.search(
        r"/" + re.escape(project) + r"-[0-9]+(\.[0-9]+)*\.tar\.xz$", url):
    say(f"package.py url {url} does not end in meson dist's tarball "
        f"({project}-<version>.tar.xz)")
options = set(re.findall(r"^option\('([a-z0-9_]+)'",
                         open("meson_options.txt").read(), re.M))
used = set(re.findall(r'\bvariant\(\s*"([a-z0-9_]+)"', recipe))
used |= set(re.findall(r'\b(?:feature|boolean)\("([a-z0-9_]+)"\)', recipe))
used |= set(re.findall(r'"-D([a-z0-9_]+)=', recipe))
for name in sorted(used - options):
    say(f"package.py names {name}, which is no option of meson_options.txt")
sys.exit(bad)
