#!/usr/bin/env python3
"""The installed schemas work on their own: `cmake --install <build> --component schemas` into a
scratch prefix puts the checker beside the schemas, and there
  - the installed check_schemas.py, run from elsewhere without --schemas, validates the golden
    records against the schemas beside it and rejects a broken one;
  - plain jsonschema, given the schemas keyed by their $id and nothing else (no file names, no
    base URI), resolves each schema's common.schema.json refs and validates the golden records.

  test_installed_schemas.py --root SRC --build BUILD [--cmake CMAKE]

Exit 0 all passed, 1 a check failed, 77 (SKIPPED) without the Python module jsonschema.
"""
import argparse
import copy
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

try:
    import jsonschema
except ImportError:  # pragma: no cover - the skip path
    print("SKIPPED: the Python module jsonschema is not installed (Debian: python3-jsonschema)")
    sys.exit(77)

failures = 0


def check(ok, what):
    global failures
    print(f"{'ok' if ok else 'FAIL'}: {what}")
    failures += 0 if ok else 1


def plain_validator(schemas, root):
    """A draft 2020-12 validator for `root` that knows the schemas only by their $id."""
    by_id = {s["$id"]: s for s in schemas if "$id" in s}
    try:
        import referencing
        import referencing.jsonschema
    except ImportError:  # jsonschema < 4.18 (Debian 12: 4.10)
        resolver = jsonschema.RefResolver.from_schema(root, store=by_id)
        return jsonschema.Draft202012Validator(root, resolver=resolver)
    registry = referencing.Registry().with_resources(
        (uri, referencing.jsonschema.DRAFT202012.create_resource(s)) for uri, s in by_id.items())
    return jsonschema.Draft202012Validator(root, registry=registry)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--cmake", default="cmake")
    args = parser.parse_args()
    golden = [os.path.join(os.path.abspath(args.root), "tests", "fixtures", "golden", n)
              for n in ("seed.json", "micro.json", "inference.json")]
    with tempfile.TemporaryDirectory(prefix="gpuperf-schemas-") as work:
        prefix = os.path.join(work, "prefix")
        install = subprocess.run([args.cmake, "--install", args.build, "--component", "schemas",
                                  "--prefix", prefix], capture_output=True, text=True, check=False)
        if install.returncode != 0:
            print(f"FAIL: cmake --install --component schemas: {install.stderr[-2000:]}")
            return 1
        folder = os.path.join(prefix, "share", "gpuperf", "schema")
        checker = os.path.join(folder, "check_schemas.py")
        check(os.access(checker, os.X_OK), "check_schemas.py is installed beside the schemas, "
                                           "executable")

        # The installed checker finds the schemas beside it (no --schemas, run from elsewhere).
        run = subprocess.run([sys.executable, checker, "validate", *golden], cwd=work,
                             capture_output=True, text=True, check=False)
        check(run.returncode == 0, f"the installed checker validates the golden records "
                                   f"({run.stdout.strip().splitlines()[-1:] or run.stderr[-300:]})")
        with open(golden[0], encoding="utf-8") as f:
            seed = json.load(f)
        broken = copy.deepcopy(seed)
        broken["config"]["batch_size"] = "four"
        bad = os.path.join(work, "bad.json")
        with open(bad, "w", encoding="utf-8") as f:
            json.dump(broken, f)
        run = subprocess.run([sys.executable, checker, "validate", bad], cwd=work,
                             capture_output=True, text=True, check=False)
        check(run.returncode == 1 and "config.batch_size" in run.stdout,
              "the installed checker rejects a string batch size, naming the field")

        # Plain jsonschema: the schemas keyed by their $id resolve each other's refs.
        schemas = []
        for path in sorted(glob.glob(os.path.join(folder, "*.schema.json"))):
            with open(path, encoding="utf-8") as f:
                schemas.append(json.load(f))
        check(len(schemas) > 1 and all("$id" in s for s in schemas),
              f"every installed schema has an $id ({len(schemas)} schemas)")
        by_file = {s["$id"].rsplit("/", 1)[-1]: s for s in schemas if "$id" in s}
        for path in golden:
            with open(path, encoding="utf-8") as f:
                document = json.load(f)
            tag = document["schema"]  # gpuperf.run/1 -> run-1.schema.json
            name = tag[len("gpuperf."):].replace("/", "-") + ".schema.json"
            try:
                errors = list(plain_validator(schemas, by_file[name]).iter_errors(document))
            except Exception as e:  # an unresolvable ref raises while validating
                errors = [f"{type(e).__name__}: {e}"]
            check(not errors, f"plain jsonschema validates {os.path.basename(path)} against "
                              f"{name}{': ' + str(errors[0])[:200] if errors else ''}")
        run_schema = by_file.get("run-1.schema.json")
        check(run_schema is not None and
              any(plain_validator(schemas, run_schema).iter_errors(broken)),
              "plain jsonschema rejects the string batch size too")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
