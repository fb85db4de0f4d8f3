#!/usr/bin/env bash
# Device call 2 (one H200): the batch-1 inference profile again (call 1's stopped at its last
# step, the per-convolution choice, on a KeyError): no build.
set -uo pipefail
L=$OUT/logs; mkdir -p $L
timeout 400 python3 benchmarks/python/profile_inference.py --batch-sizes 1,2,8 --json $L/profile-inference.json > $L/profile-inference.txt 2>&1; echo "profile rc=$? at ${SECONDS}s"
grep -E "^## |^batch|sum of|ms at" $L/profile-inference.txt | head -40
cp $L/profile-inference.txt $L/profile-inference.json $OUT/
