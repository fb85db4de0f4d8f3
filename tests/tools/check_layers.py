#!/usr/bin/env python3
"""Checks the include direction between gpuperf's modules (docs/architecture.md).

Every .h/.cpp under libgpuperf/core and libgpuperf/torch belongs to a module (the folder under
include/gpuperf/ or src/), and every quoted include (and every <gpuperf/...> include) names a
module. A module may include its own and lower modules' headers; a torch module may include
any core module; a core file may include no torch module and no LibTorch header. An include of
a module that is not declared below fails too, so a new module has to be declared here.

The umbrella headers (gpuperf/core.h, gpuperf/gpuperf.h) must include every public header of
their library and nothing else.

The programs (apps/, examples/, benchmarks/) use the library as its users do: through its public
headers (<gpuperf/...> or "gpuperf/...", umbrellas included) and their own files (beside the
including file or in apps/support/), never a private header of libgpuperf/*/src/.

CUDA files (.cu, .cuh) are checked like C++ files.

  check_layers.py [--root <repository>]   # exit 1 and one line per violation
  check_layers.py --self-test             # plants violations in a temporary tree

Python 3 standard library only.
"""

import os
import re
import sys

import checker_harness

# ---- The declared layers, bottom to top ---------------------------------------------------------
LAYERS = {
    "core": ["base", "timing", "telemetry", "specs", "plan", "input", "serving", "results", "report", "advise"],
    "torch": ["device", "comm", "optim", "amp", "models", "train", "infer", "micro", "distributed"],
}
# Libraries in dependency order: a library may use every module of the libraries before it.
LIBRARIES = ["core", "torch"]
# Private headers directly under <library>/src/ and the module they count for.
LOOSE_PRIVATE_HEADERS = {
    ("torch", "compat.h"): "device",
}
# Headers generated into the build tree: include path -> module.
GENERATED_HEADERS = {
    "gpuperf/base/version.h": "base",
}
# Umbrella headers: library -> (include path, what it includes besides its library's headers).
UMBRELLAS = {
    "core": ("gpuperf/core.h", ["gpuperf/base/version.h"]),
    "torch": ("gpuperf/gpuperf.h", ["gpuperf/core.h"]),
}
# First path component of LibTorch's headers (a core file may include none of them).
LIBTORCH_PREFIXES = ["torch", "ATen", "c10", "caffe2"]
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh")
# The programs' folders, and the include directories their own headers are found in.
PROGRAM_DIRS = ["apps", "examples", "benchmarks"]
PROGRAM_INCLUDE_DIRS = ["apps/support"]
# -------------------------------------------------------------------------------------------------

MODULE_LIBRARY = {m: lib for lib in LIBRARIES for m in LAYERS[lib]}
MODULE_RANK = {m: i for lib in LIBRARIES for i, m in enumerate(LAYERS[lib])}
UMBRELLA_PATHS = {path: lib for lib, (path, _) in UMBRELLAS.items()}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def strip_comments(lines):
    """Yields (line number, text) with /* */ and // comments blanked (string-naive, enough for
    include lines)."""
    in_block = False
    for number, line in enumerate(lines, 1):
        out = []
        i = 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    i = len(line)
                else:
                    in_block = False
                    i = end + 2
                continue
            start_block = line.find("/*", i)
            start_line = line.find("//", i)
            if start_line >= 0 and (start_block < 0 or start_line < start_block):
                out.append(line[i:start_line])
                break
            if start_block >= 0:
                out.append(line[i:start_block])
                in_block = True
                i = start_block + 2
                continue
            out.append(line[i:])
            break
        yield number, "".join(out)


def includes_of(path):
    """[(line number, delimiter, include text)] of a file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    result = []
    for number, text in strip_comments(lines):
        m = INCLUDE_RE.match(text)
        if m:
            result.append((number, m.group(1), m.group(2).strip()))
    return result


class Tree:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.lib_dir = os.path.join(self.root, "libgpuperf")

    def rel(self, path):
        return os.path.relpath(path, self.root)

    def include_dir(self, lib):
        return os.path.join(self.lib_dir, lib, "include")

    def files(self):
        for lib in LIBRARIES:
            base = os.path.join(self.lib_dir, lib)
            for dirpath, dirnames, filenames in os.walk(base):
                dirnames.sort()
                for name in sorted(filenames):
                    if name.endswith(SOURCE_SUFFIXES):
                        yield lib, os.path.join(dirpath, name)

    def public_headers(self, lib):
        """Include paths ("gpuperf/<module>/<name>.h") of a library's public headers, without
        its umbrella."""
        base = self.include_dir(lib)
        result = []
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith((".h", ".hpp")):
                    inc = os.path.relpath(os.path.join(dirpath, name), base).replace(os.sep, "/")
                    if inc not in UMBRELLA_PATHS:
                        result.append(inc)
        return result

    def file_module(self, lib, path):
        """(module, problem): the module a library file belongs to; module None for an umbrella
        header; problem is a message when the file is in no declared module."""
        parts = os.path.relpath(path, os.path.join(self.lib_dir, lib)).split(os.sep)
        if parts[0] == "include":
            inc = "/".join(parts[1:])
            if inc in UMBRELLA_PATHS:
                if UMBRELLA_PATHS[inc] != lib:
                    return None, "umbrella %s belongs to library %s" % (inc, UMBRELLA_PATHS[inc])
                return None, None
            if len(parts) < 4 or parts[1] != "gpuperf":
                return None, ("public header not under include/gpuperf/<module>/ "
                              "(module not in the declared order)")
            module = parts[2]
        elif parts[0] == "src":
            if len(parts) == 2:
                module = LOOSE_PRIVATE_HEADERS.get((lib, parts[1]))
                if module is None:
                    return None, ("file directly under %s/src/ counts for no module (declare it "
                                  "in LOOSE_PRIVATE_HEADERS or move it into src/<module>/)" % lib)
                return module, None
            module = parts[1]
        else:
            return None, "file outside include/ and src/ of library %s" % lib
        if module not in MODULE_LIBRARY:
            return None, "module '%s' is not in the declared order" % module
        if MODULE_LIBRARY[module] != lib:
            return None, ("module '%s' is declared in library %s but this file is in %s"
                          % (module, MODULE_LIBRARY[module], lib))
        return module, None

    def include_module(self, lib, path, delimiter, inc):
        """(kind, value) for an include: ("module", name), ("umbrella", include path),
        ("libtorch", None), ("system", None) or ("unknown", message)."""
        first = inc.split("/", 1)[0]
        if delimiter == "<" and first != "gpuperf":
            if first in LIBTORCH_PREFIXES:
                return "libtorch", None
            return "system", None
        if inc in UMBRELLA_PATHS:
            return "umbrella", inc
        if inc in GENERATED_HEADERS:
            return "module", GENERATED_HEADERS[inc]
        segments = inc.split("/")
        if segments[0] == "gpuperf":
            if len(segments) < 3:
                return "unknown", "'%s' names no module (gpuperf/<module>/<header>)" % inc
            module = segments[1]
            if module not in MODULE_LIBRARY:
                return "unknown", "module '%s' is not in the declared order" % module
            header = os.path.join(self.include_dir(MODULE_LIBRARY[module]), *segments)
            if not os.path.isfile(header):
                return "unknown", "no public header %s in library %s" % (
                    inc, MODULE_LIBRARY[module])
            return "module", module
        if first in LIBTORCH_PREFIXES and len(segments) > 1:
            return "libtorch", None
        # A private header: "<module>/<name>.h" from <library>/src, a loose one under src/, or a
        # name next to the including file.
        for owner in LIBRARIES:
            src = os.path.join(self.lib_dir, owner, "src")
            if len(segments) == 1 and (owner, inc) in LOOSE_PRIVATE_HEADERS and \
                    os.path.isfile(os.path.join(src, inc)):
                if owner != lib:
                    return "unknown", "private header %s of library %s" % (inc, owner)
                return "module", LOOSE_PRIVATE_HEADERS[(owner, inc)]
            if len(segments) > 1 and os.path.isfile(os.path.join(src, *segments)):
                module = segments[0]
                if module not in MODULE_LIBRARY:
                    return "unknown", "module '%s' is not in the declared order" % module
                if owner != lib:
                    return "unknown", "private header %s of library %s" % (inc, owner)
                return "module", module
        beside = os.path.join(os.path.dirname(path), *segments)
        if os.path.isfile(beside):
            module, problem = self.file_module(lib, beside)
            if module is None:
                return "unknown", problem or "'%s' belongs to no module" % inc
            return "module", module
        return "unknown", ("'%s' resolves to no header of a declared module (not part of "
                           "libgpuperf?)" % inc)


def program_files(tree):
    for folder in PROGRAM_DIRS:
        base = os.path.join(tree.root, folder)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.join(dirpath, name)


def program_include_problem(tree, path, delimiter, inc):
    """Why a program's include is not allowed, or None."""
    segments = inc.split("/")
    if segments[0] == "gpuperf":
        if inc in UMBRELLA_PATHS or inc in GENERATED_HEADERS:
            return None
        for lib in LIBRARIES:
            if os.path.isfile(os.path.join(tree.include_dir(lib), *segments)):
                return None
        return "no public header %s in libgpuperf" % inc
    if delimiter == "<":
        return None  # a system or LibTorch header
    candidates = [os.path.join(os.path.dirname(path), *segments)] + [
        os.path.join(tree.root, d, *segments) for d in PROGRAM_INCLUDE_DIRS]
    for candidate in candidates:
        if os.path.isfile(candidate):
            real = os.path.realpath(candidate)
            if real.startswith(os.path.realpath(tree.lib_dir) + os.sep):
                return ("a program includes the library's public headers only, not its private "
                        "%s" % tree.rel(real))
            return None
    return ("'%s' resolves to no file of the programs' folders (%s) and no public header"
            % (inc, ", ".join(PROGRAM_INCLUDE_DIRS + ["beside the file"])))


def check(root):
    """Returns the violations as lines "file:line: #include X: why"."""
    tree = Tree(root)
    violations = []

    def report(path, line, inc, why):
        where = tree.rel(path) + (":%d" % line if line else "")
        violations.append("%s: %s: %s" % (where, "#include " + inc if inc else "-", why))

    if not os.path.isdir(tree.lib_dir):
        return ["%s: no libgpuperf/ folder" % tree.root]

    for lib, path in tree.files():
        module, problem = tree.file_module(lib, path)
        is_umbrella = module is None and problem is None
        if problem:
            report(path, 0, None, problem)
        if is_umbrella:
            continue  # checked below
        for line, delimiter, inc in includes_of(path):
            shown = delimiter + inc + (">" if delimiter == "<" else '"')
            kind, value = tree.include_module(lib, path, delimiter, inc)
            if kind == "system":
                continue
            if kind == "libtorch":
                if lib == "core":
                    report(path, line, shown, "a core file may not include a LibTorch header")
                continue
            if kind == "umbrella":
                report(path, line, shown, "library files include the headers they use, "
                       "not an umbrella header")
                continue
            if kind == "unknown":
                report(path, line, shown, value)
                continue
            target = value
            target_lib = MODULE_LIBRARY[target]
            if lib == "core" and target_lib != "core":
                report(path, line, shown,
                       "a core file may not include torch module '%s'" % target)
                continue
            if module is None or target_lib != lib:
                continue  # a file in no module was reported above; torch may use all of core
            if MODULE_RANK[target] > MODULE_RANK[module]:
                report(path, line, shown, "upward include: module '%s' is below '%s' (%s)" % (
                    module, target, " < ".join(LAYERS[lib])))

    for path in program_files(tree):
        for line, delimiter, inc in includes_of(path):
            problem = program_include_problem(tree, path, delimiter, inc)
            if problem:
                report(path, line, delimiter + inc + (">" if delimiter == "<" else '"'), problem)

    for lib in LIBRARIES:
        umbrella, extra = UMBRELLAS[lib]
        path = os.path.join(tree.include_dir(lib), *umbrella.split("/"))
        if not os.path.isfile(path):
            report(path, 0, None, "umbrella header %s is missing" % umbrella)
            continue
        included = {}
        for line, delimiter, inc in includes_of(path):
            included.setdefault(inc, line)
        expected = set(tree.public_headers(lib)) | set(extra)
        for inc in sorted(expected - set(included)):
            report(path, 0, '"%s"' % inc, "missing: the umbrella header includes every public "
                   "header of its library")
        for inc, line in sorted(included.items(), key=lambda kv: kv[1]):
            if inc not in expected:
                report(path, line, '"%s"' % inc, "an umbrella header includes only its library's "
                       "public headers (and %s)" % ", ".join(extra))
    return violations


# ---- --self-test ----------------------------------------------------------------------------------
def clean_tree(root):
    """A tiny tree with no violation."""
    checker_harness.write(root, "libgpuperf/core/include/gpuperf/base/error.h", "#pragma once\n")
    checker_harness.write(root, "libgpuperf/core/include/gpuperf/timing/timer.h",
          '#pragma once\n#include "gpuperf/base/error.h"\n#include <vector>\n')
    checker_harness.write(root, "libgpuperf/core/src/base/json.h", '#pragma once\n#include "gpuperf/base/error.h"\n')
    checker_harness.write(root, "libgpuperf/core/src/timing/timer.cpp",
          '#include "gpuperf/timing/timer.h"\n#include "base/json.h"\n'
          '// #include "gpuperf/device/device.h" (a comment, not an include)\n')
    checker_harness.write(root, "libgpuperf/core/include/gpuperf/core.h",
          '#pragma once\n#include "gpuperf/base/error.h"\n#include "gpuperf/timing/timer.h"\n'
          '#include "gpuperf/base/version.h"\n')
    checker_harness.write(root, "libgpuperf/torch/include/gpuperf/device/device.h",
          '#pragma once\n#include <torch/types.h>\n#include "gpuperf/timing/timer.h"\n')
    checker_harness.write(root, "libgpuperf/torch/src/compat.h", "#pragma once\n#include <ATen/Context.h>\n")
    checker_harness.write(root, "libgpuperf/torch/src/models/model.cpp",
          '#include "compat.h"\n#include "gpuperf/device/device.h"\n')
    checker_harness.write(root, "libgpuperf/torch/include/gpuperf/gpuperf.h",
          '#pragma once\n#include "gpuperf/core.h"\n#include "gpuperf/device/device.h"\n')
    checker_harness.write(root, "libgpuperf/torch/src/models/kernels.cuh",
          '#pragma once\n#include <cuda_runtime_api.h>\n')
    checker_harness.write(root, "libgpuperf/torch/src/models/kernels.cu", '#include "models/kernels.cuh"\n')
    checker_harness.write(root, "apps/support/program.h", '#pragma once\n#include "gpuperf/core.h"\n')
    checker_harness.write(root, "apps/bench.cpp",
          '#include "program.h"\n#include <gpuperf/gpuperf.h>\n#include "gpuperf/device/device.h"\n'
          '#include <torch/types.h>\n')


def planted_cases():
    # (name, files to plant over the clean tree, the file:line that must be reported, words of
    # the reason)
    cases = [
        ("upward include", {"libgpuperf/core/include/gpuperf/base/error.h":
                            '#pragma once\n#include "gpuperf/timing/timer.h"\n'},
         "libgpuperf/core/include/gpuperf/base/error.h:2", "upward include"),
        ("core includes a torch module", {"libgpuperf/core/src/timing/timer.cpp":
                                          '#include "gpuperf/device/device.h"\n'},
         "libgpuperf/core/src/timing/timer.cpp:1", "torch module 'device'"),
        ("core includes LibTorch", {"libgpuperf/core/src/timing/timer.cpp":
                                    "#include <vector>\n#include <ATen/Tensor.h>\n"},
         "libgpuperf/core/src/timing/timer.cpp:2", "LibTorch"),
        ("undeclared module", {"libgpuperf/torch/src/models/model.cpp":
                               '#include "gpuperf/plugins/plugin.h"\n'},
         "libgpuperf/torch/src/models/model.cpp:1", "not in the declared order"),
        ("torch upward through a private header", {"libgpuperf/torch/src/device/x.cpp":
                                                   '#include "models/helper.h"\n',
                                                   "libgpuperf/torch/src/models/helper.h":
                                                   "#pragma once\n"},
         "libgpuperf/torch/src/device/x.cpp:1", "upward include"),
        ("umbrella misses a header", {"libgpuperf/core/include/gpuperf/timing/stats.h":
                                      '#pragma once\n'},
         "libgpuperf/core/include/gpuperf/core.h", '#include "gpuperf/timing/stats.h": missing'),
        ("umbrella includes something else", {"libgpuperf/torch/include/gpuperf/gpuperf.h":
                                              '#pragma once\n#include "gpuperf/core.h"\n'
                                              '#include "gpuperf/device/device.h"\n'
                                              '#include "micro_cli.h"\n'},
         "libgpuperf/torch/include/gpuperf/gpuperf.h:4", "includes only"),
        ("a CUDA file includes upward", {"libgpuperf/torch/src/device/kernels.cu":
                                         '#include "models/kernels.cuh"\n'},
         "libgpuperf/torch/src/device/kernels.cu:1", "upward include"),
        ("a program includes a private header", {"apps/bench.cpp":
                                                 '#include "program.h"\n'
                                                 '#include "../libgpuperf/torch/src/compat.h"\n'},
         "apps/bench.cpp:2", "public headers only"),
        ("a program includes a header that is not public", {"examples/demo.cpp":
                                                            '#include "gpuperf/models/kernels.cuh"\n'},
         "examples/demo.cpp:1", "no public header"),
    ]
    return cases


if __name__ == "__main__":
    sys.exit(checker_harness.main(__file__, __doc__, check, clean_tree, planted_cases,
                                  "violations"))
