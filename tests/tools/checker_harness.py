"""What tests/tools/check_layers.py and tests/tools/check_no_flags.py share: a planted-file
self-test and the command line (--root, --self-test). A checker supplies check(root) -> list of
violation lines, clean_tree(root) (a tree it must accept) and its planted cases: (name, {path:
text}, where, why), each of which must give exit 1 and exactly one line starting "where:" and
containing "why"."""
import argparse
import os
import subprocess
import sys
import tempfile


def write(root, rel, text):
    path = os.path.join(root, *rel.split("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def run_checker(script, root):
    proc = subprocess.run([sys.executable, script, "--root", root], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    return proc.returncode, proc.stdout


def self_test(script, clean_tree, cases, noun):
    failures = []
    with tempfile.TemporaryDirectory(prefix=os.path.basename(script) + "_") as tmp:
        root = os.path.join(tmp, "clean")
        clean_tree(root)
        rc, out = run_checker(script, root)
        if rc != 0:
            failures.append("clean tree: expected exit 0, got %d:\n%s" % (rc, out))
        for i, (name, planted, where, why) in enumerate(cases):
            root = os.path.join(tmp, "case%d" % i)
            clean_tree(root)
            for rel, text in planted.items():
                write(root, rel, text)
            rc, out = run_checker(script, root)
            lines = out.splitlines()
            hits = [l for l in lines if l.startswith(where + ":") and why in l]
            if rc != 1 or not hits or len(lines) != 1:
                failures.append("%s: expected exit 1 and exactly one line '%s: ... %s', got exit "
                                "%d:\n%s" % (name, where, why, rc, out))
            else:
                print("ok: %s -> %s" % (name, hits[0]))
    if failures:
        for f in failures:
            print("FAIL: " + f)
        return 1
    print("self-test passed (%d planted %s reported, clean tree accepted)" % (len(cases), noun))
    return 0


def main(script, doc, check, clean_tree, cases, noun):
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(script)))), help="repository root (default: the one holding this script)")
    parser.add_argument("--self-test", action="store_true",
                        help="check that planted %s in a temporary tree are reported" % noun)
    args = parser.parse_args()
    if args.self_test:
        return self_test(os.path.abspath(script), clean_tree, cases(), noun)
    violations = check(args.root)
    for v in violations:
        print(v)
    return 1 if violations else 0
