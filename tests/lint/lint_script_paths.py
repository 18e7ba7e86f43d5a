#!/usr/bin/env python3
"""lint_script_paths.py - every file of the meson build tree that a script
under scripts/ names must be one the build makes.

A script names a file of the build tree as $VAR/dir/file, where VAR holds
the meson build directory: `build`, any variable set by a --build or
--build-dir option, and variables set from those ($bdir=$build/bench).
Each such path whose parts are all literal (no $, glob or brace) and whose
first directory holds meson.build files of the build (src, compat,
tools, bench, tests, ...) must be

  - an output of a target of this build (meson-info/intro-targets.json:
    every target of the configuration, built yet or not), or a directory
    of the build tree (or of targets' outputs); or
  - a file the directory's meson.build writes with configure_file (at
    setup: it exists in the build tree); or
  - when this configuration leaves the target out (an optional dependency
    is missing), an output that the directory's meson.build declares:
    executable('F'), or lib<name>.<name_suffix or so / a> of a library.

Files meson itself writes (build.ninja, meson-info/...) must exist.  Paths
into the script's own working directories (logs, corpora) are not the
build's and are not checked.

usage: lint_script_paths.py SOURCE_ROOT BUILD_ROOT
"""
import json
import os
import re
import sys

MESON_FILES = {'build.ninja', 'compile_commands.json', 'meson-info',
               'meson-logs', 'meson-private'}
STATIC_PART = re.compile(r'^[A-Za-z0-9_.+-]+$')


def build_vars(text):
    """Variable -> path prefix inside the build tree ('' = its root)."""
    names = {'build': ''}
    for m in re.finditer(r'--build(?:-dir)?\)\s*([A-Za-z_][A-Za-z0-9_]*)=',
                         text):
        names[m.group(1)] = ''
    # NAME=$build/rel (one level): NAME points at build/rel.
    for m in re.finditer(r'(?:^|[\s;])(?:local\s+)?([A-Za-z_][A-Za-z0-9_]*)='
                         r'"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/([^\s"\')]+)',
                         text, re.M):
        var, base, rel = m.groups()
        if base in names and var not in names and \
                all(STATIC_PART.match(p) for p in rel.split('/')):
            names[var] = rel
    return names


def named_paths(text, names):
    """(line number, variable, path in the build tree) of every literal
    $VAR/path of a build variable."""
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith('#'):
            continue
        for m in re.finditer(r'\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/'
                             r'([A-Za-z0-9_.+$/{}\[\]*-]+)', line):
            var, rel = m.groups()
            if var not in names:
                continue
            rel = rel.rstrip('/.')
            parts = rel.split('/')
            if not all(STATIC_PART.match(p) for p in parts):
                continue
            full = '/'.join(p for p in (names[var], rel) if p)
            out.append((no, var, full))
    return out


def declared_outputs(meson_build):
    """Output file names the targets of one meson.build declare."""
    try:
        text = open(meson_build, encoding='utf-8').read()
    except OSError:
        return set()
    outs = set()
    for m in re.finditer(r"\b(executable|shared_library|static_library|"
                         r"library|shared_module)\(\s*'([^']+)'", text):
        kind, name = m.groups()
        # the call's text up to its closing parenthesis
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {'(': 1, ')': -1}.get(text[i], 0)
            i += 1
        call = text[m.end():i]
        suffix = re.search(r"name_suffix\s*:\s*'([^']+)'", call)
        if kind == 'executable':
            outs.add(name)
        elif suffix:
            outs.add('lib%s.%s' % (name, suffix.group(1)))
        else:
            if kind in ('shared_library', 'library', 'shared_module'):
                outs.add('lib%s.so' % name)
            if kind in ('static_library', 'library'):
                outs.add('lib%s.a' % name)
    return outs


def configured_files(meson_build):
    """Files a meson.build writes with configure_file(output: 'F') at
    setup time (no target: meson-info does not list them)."""
    try:
        text = open(meson_build, encoding='utf-8').read()
    except OSError:
        return set()
    return set(re.findall(r"configure_file\([^)]*?output\s*:\s*'([^']+)'",
                          text, re.S))


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src, build = (os.path.realpath(a) for a in sys.argv[1:])
    try:
        with open(os.path.join(build, 'meson-info',
                               'intro-targets.json')) as f:
            targets = json.load(f)
    except OSError as e:
        print('lint_script_paths: %s is not a meson build directory (%s)'
              % (build, e), file=sys.stderr)
        return 2
    made = set()
    for t in targets:
        for fn in t.get('filename', []):
            made.add(os.path.relpath(os.path.realpath(fn), build))
    # top directories of the meson.build files this configuration read
    with open(os.path.join(build, 'meson-info',
                           'intro-buildsystem_files.json')) as f:
        meson_dirs = {os.path.relpath(os.path.realpath(m), src)
                      .split(os.sep)[0] for m in json.load(f)
                      if os.path.basename(m) == 'meson.build'}
    meson_dirs.discard('meson.build')
    sdir = os.path.join(src, 'scripts')
    bad, checked, optional = [], 0, []
    for name in sorted(os.listdir(sdir)):
        if not name.endswith('.sh'):
            continue
        text = open(os.path.join(sdir, name), encoding='utf-8').read()
        for no, var, rel in named_paths(text, build_vars(text)):
            top = rel.split('/')[0]
            where = 'scripts/%s:%d: $%s -> %s' % (name, no, var, rel)
            if top in MESON_FILES:
                checked += 1
                if not os.path.exists(os.path.join(build, rel)):
                    bad.append(where + ': meson writes no such file')
                continue
            if top not in meson_dirs:
                continue        # the script's own working files
            checked += 1
            if rel in made or os.path.isdir(os.path.join(build, rel)) or \
                    any(m.startswith(rel + '/') for m in made):
                continue
            d, f = os.path.split(rel)
            if f in configured_files(os.path.join(src, d, 'meson.build')) \
                    and os.path.exists(os.path.join(build, rel)):
                continue
            if f in declared_outputs(os.path.join(src, d, 'meson.build')):
                optional.append(where)
                continue
            mine = sorted(m for m in made if os.path.dirname(m) == d)
            bad.append(where + ': the build makes no such file (%s makes: %s)'
                       % (d or '.', ', '.join(os.path.basename(m)
                                              for m in mine) or 'nothing'))
    for o in optional:
        print('not in this configuration (optional target): ' + o)
    for b in bad:
        print(b)
    print('lint_script_paths: %d build-tree paths in scripts/*.sh, %d wrong'
          % (checked, len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
