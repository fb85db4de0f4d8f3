#!/usr/bin/env python3
"""Checks that the library does not speak command-line flags (issue #31).

The library names settings by their fields ("MeasureOptions::max_seconds", "TrainingRun::
batch_size"); the programs map fields to flags in one place (kFlagOfField in
apps/support/program.cpp). So no string literal and no comment of a C/C++/CUDA file under
libgpuperf/core or libgpuperf/torch may hold a flag: "--" followed by a lower-case letter, not
preceded by a word character or a dash. Code outside literals and comments (`--i`) is not
looked at, and a Markdown table separator ("|---|") is no flag.

  check_no_flags.py [--root <repository>]   # exit 1 and one line per flag
  check_no_flags.py --self-test             # plants flags in a temporary tree

Python 3 standard library only.
"""

import os
import re
import sys

import checker_harness

# ---- What is checked ------------------------------------------------------------------------------
CHECKED_DIRS = ["libgpuperf/core", "libgpuperf/torch"]
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh")
# A flag: two dashes and a lower-case letter, not inside a longer run of dashes or a word.
FLAG_RE = re.compile(r"(?<![-\w])--[a-z][a-z0-9_-]*")
# ---------------------------------------------------------------------------------------------------

RAW_STRING_RE = re.compile(r'R"([^()\\\s]{0,16})\(')


def texts_of(source):
    """Yields (line number, kind, text) for every string literal and comment of a C/C++ source:
    kind is "string literal" or "comment"; an escape sequence in a literal reads as a space (so
    "\\n--x" is seen as " --x"). Character literals are skipped; a quote after a letter or digit
    is a digit separator (1'000), not one."""
    i, line, n = 0, 1, len(source)
    while i < n:
        c = source[i]
        if c == "\n":
            line += 1
            i += 1
        elif source.startswith("//", i):
            end = source.find("\n", i)
            end = n if end < 0 else end
            yield line, "comment", source[i + 2:end]
            i = end
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end
            start_line = line
            for number, text in enumerate(source[i + 2:end].split("\n")):
                yield start_line + number, "comment", text
            line += source.count("\n", i, end)
            i = end + 2
        elif c == "R" and RAW_STRING_RE.match(source, i) and \
                (i == 0 or not (source[i - 1].isalnum() and source[i - 1] not in "uUL8")):
            m = RAW_STRING_RE.match(source, i)
            close = ")" + m.group(1) + '"'
            end = source.find(close, m.end())
            end = n if end < 0 else end
            start_line = line
            for number, text in enumerate(source[m.end():end].split("\n")):
                yield start_line + number, "string literal", text
            line += source.count("\n", i, end)
            i = end + len(close)
        elif c == '"' or (c == "'" and (i == 0 or not (source[i - 1].isalnum() or
                                                        source[i - 1] == "_"))):
            quote, body, i = c, [], i + 1
            while i < n and source[i] != quote and source[i] != "\n":
                if source[i] == "\\" and i + 1 < n:
                    body.append(" ")
                    if source[i + 1] == "\n":
                        line += 1
                    i += 2
                else:
                    body.append(source[i])
                    i += 1
            if quote == '"':
                yield line, "string literal", "".join(body)
            i += 1
        else:
            i += 1


def files(root):
    for top in CHECKED_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, *top.split("/"))):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.join(dirpath, name)


def check(root):
    """Returns the flags found as lines "file:line: --flag in a <kind>: ..."."""
    root = os.path.abspath(root)
    if not os.path.isdir(os.path.join(root, "libgpuperf")):
        return ["%s: no libgpuperf/ folder" % root]
    violations = []
    for path in files(root):
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
        for line, kind, text in texts_of(source):
            for m in FLAG_RE.finditer(text):
                violations.append("%s:%d: %s in a %s: name the field (Owner::field), not a "
                                  "program's flag" % (os.path.relpath(path, root), line,
                                                      m.group(0), kind))
    return violations


# ---- --self-test ----------------------------------------------------------------------------------
CLEAN_CPP = """// Names MeasureOptions::max_seconds, not a flag; a -- b and an em--dash are no flags.
#include <string>
/* A block comment: | a | b |
   |---|---| */
int f(int i) {
  --i;
  const std::string table = "|---|---|\\n|:--|--:|";
  const char separator = '-';
  const int million = 1'000'000;
  return i-- + --i + million + separator + static_cast<int>(table.size());
}
"""


def clean_tree(root):
    """A tiny tree with no flag."""
    checker_harness.write(root, "libgpuperf/core/src/timing/measure.cpp", CLEAN_CPP)
    checker_harness.write(root, "libgpuperf/torch/include/gpuperf/train/run.h",
          "#pragma once\n/// TrainingRun::batch_size: samples per step.\nint g();\n")
    # Outside the checked folders, flags are fine.
    checker_harness.write(root, "apps/program.cpp", 'const char* flag = "--batch-size";\n')


def planted_cases():
    # (name, files to plant over the clean tree, the file:line that must be reported, words of
    # the report)
    cases = [
        ("a flag in a string literal", {"libgpuperf/core/src/timing/measure.cpp":
                                        CLEAN_CPP + 'const char* w = "use --min-windows 3";\n'},
         "libgpuperf/core/src/timing/measure.cpp:12", "--min-windows in a string literal"),
        ("a flag in a doc comment", {"libgpuperf/torch/include/gpuperf/train/run.h":
                                     "#pragma once\n\n/// Throws ConfigError naming --device.\n"},
         "libgpuperf/torch/include/gpuperf/train/run.h:3", "--device in a comment"),
        ("a flag on a later line of a block comment", {"libgpuperf/core/src/a/b.h":
                                                       "/* one\n   two --json\n*/\n"},
         "libgpuperf/core/src/a/b.h:2", "--json in a comment"),
        ("a flag after an escape", {"libgpuperf/core/src/a/b.cpp":
                                    'auto s = "x\\n--quiet";\n'},
         "libgpuperf/core/src/a/b.cpp:1", "--quiet in a string literal"),
        ("a flag in a raw string", {"libgpuperf/torch/src/a/b.cpp":
                                    'auto s = R"(\n\n  give --price GPU=USD/h)";\n'},
         "libgpuperf/torch/src/a/b.cpp:3", "--price in a string literal"),
        ("a flag in a CUDA file", {"libgpuperf/torch/src/models/k.cu":
                                   "// tuned with --gemm-size 8192\n__global__ void k() {}\n"},
         "libgpuperf/torch/src/models/k.cu:1", "--gemm-size in a comment"),
    ]
    return cases


if __name__ == "__main__":
    sys.exit(checker_harness.main(__file__, __doc__, check, clean_tree, planted_cases,
                                  "flags"))
