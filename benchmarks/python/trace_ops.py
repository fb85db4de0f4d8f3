#!/usr/bin/env python3
"""Which CPU operator launched each kernel matching a pattern, from a Kineto Chrome trace."""
import collections, json, sys
path, pattern = sys.argv[1], sys.argv[2]
ev = json.load(open(path))
ev = ev.get("traceEvents", ev)
ops = collections.defaultdict(list)
for e in ev:
    if e.get("cat") in ("cpu_op", "user_annotation") and "args" in e and "External id" in e["args"]:
        ops[e["args"]["External id"]].append(e)
count = collections.Counter()
for e in ev:
    if e.get("cat") == "kernel" and pattern in e.get("name", ""):
        a = e.get("args", {})
        names = [o["name"] + str(o["args"].get("Input Dims", "")) + str(o["args"].get("Input type", "")) for o in ops.get(a.get("External id"), [])]
        count[(" | ".join(names) or "?", str(a.get("grid")), round(e.get("dur", 0)))] += 1
for k, v in count.most_common(30):
    print(v, k)
