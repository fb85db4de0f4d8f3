#!/usr/bin/env bash
# Device call of the twenty-sixth session (tmp-call3.sh of ba6cbb6 with arms), from the repository
# root with $OUT set; carry [".deps"].
#   bash tmp-call5.sh   build this tree (build-gpu) and OLD's (default d73dd3a, the adaptive share
#                       without the threads' busy fraction) side by side; test_train_image_folder
#                       "[gpu]"; 6,400 generated JPEGs; then ResNet-50 on them, the ARMS in turn
#                       (each <variant>:<threads>; variant new or old: --host-decode-share auto
#                       with this tree's or OLD's binary; fixed<share>: this tree's with that
#                       share), the order reversed every other round, until DEADLINE (default 560).
#                       ARMS default "new:8 old:8 fixed0.5:8 new:16"; on an H200 H200_ARMS (default
#                       "new:16 old:16 fixed1:16")
set -uo pipefail
source .deps/env.sh
T0=${T0:-$(date +%s)}
el() { echo $(( $(date +%s) - T0 )); }
left() { echo $(( ${DEADLINE:-560} - $(el) )); }
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card; $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo)"
case "$card" in *H200*) arms=${H200_ARMS:-new:16 old:16 fixed1:16} ;; *) arms=${ARMS:-new:8 old:8 fixed0.5:8 new:16} ;; esac
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
OLD=${OLD:-d73dd3a}
rm -rf /tmp/old && mkdir -p /tmp/old && git archive "$OLD" | tar -x -C /tmp/old
D=build-gpu/jpeg
build() {  # $1 source dir, $2 build dir, $3 targets
  { [ -f "$2/build.ninja" ] || cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release; } &&
    cmake --build "$2" -j8 --target $3
}
build . build-gpu "resnet50_benchmark make_jpeg_folder $( [ "${GPUTEST:-1}" = 1 ] && echo test_train_image_folder)" >"$OUT/logs/build.log" 2>&1 &
b1=$!
build /tmp/old /tmp/build-old resnet50_benchmark >"$OUT/logs/build-old.log" 2>&1 &
b2=$!
wait $b1 || { grep -B2 -A12 "error" "$OUT/logs/build.log" | head -60; finish; exit 1; }
echo "built after $(el) s"
if [ ! -d $D/all ]; then
  pids=()
  for g in 0 1 2 3 4 5 6 7; do build-gpu/benchmarks/make_jpeg_folder --out $D/g$g --classes 8 \
    --images-per-class 100 --seed $g >/dev/null 2>&1 & pids+=($!); done; wait "${pids[@]}"
  mkdir -p $D/all
  for g in 0 1 2 3 4 5 6 7; do for c in $D/g$g/*; do mv "$c" "$D/all/g$g-$(basename "$c")"; done; done
fi
[ "${GPUTEST:-1}" = 1 ] && timeout -k 10 120 build-gpu/tests/torch/test_train_image_folder "[gpu]" >"$OUT/logs/image-folder-gpu.txt" 2>&1
echo "test_train_image_folder [gpu] rc=$? ($(el) s): $(tail -2 "$OUT/logs/image-folder-gpu.txt" | head -1)"
grep -B5 -A20 "FAILED" "$OUT/logs/image-folder-gpu.txt" | head -40
wait $b2 || { grep -B2 -A12 "error" "$OUT/logs/build-old.log" | head -40; finish; exit 1; }
echo "old built after $(el) s, $(ls $D/all/*/* | wc -l) files"
run() {  # $1 tag, $2 binary, the rest resnet50_benchmark options
  local tag=$1 bin=$2; shift 2
  timeout -k 5 60 "$bin" --model resnet50 --batch-size 256 --precision fp16 \
    --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 \
    --windows 6 --data $D/all --compare-synthetic --decode gpu "$@" \
    --json "$OUT/logs/j-$tag.json" >"$OUT/logs/j-$tag.txt" 2>&1
  local rc=$?
  python3 - "$OUT/logs/j-$tag.json" "$tag" "$rc" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1])); m = r["metrics"]; g = lambda k: m.get(k, -1)
    w = r.get("window_losses", [])
    print(f"{sys.argv[2]}: ratio {g('data_to_synthetic_ratio'):.4f} synth {g('synthetic_images_per_second'):.0f} "
          f"share {g('loader_host_decode_share'):.3f} timed {g('loader_host_decode_share_timed'):.3f} last {g('loader_host_decode_share_last'):.3f} "
          f"busy {g('loader_threads_busy_fraction_last'):.2f} late {g('loader_late_batches'):.0f} "
          f"gpuwait {g('loader_gpu_thread_loader_wait_seconds_timed'):.2f} "
          f"cap {g('loader_capacity_images_per_second'):.0f} loss {r.get('first_loss', 0):.3f}->{r.get('final_loss', 0):.3f} "
          f"{'FALLS' if r.get('final_loss', 9) < r.get('first_loss', 0) else 'RISES'}")
except Exception as e:
    print(sys.argv[2], "rc", sys.argv[3], "no record:", e)
PY
}
i=0
while [ "$(left)" -gt 30 ]; do
  i=$((i + 1))
  order=$arms; [ $((i % 2)) = 0 ] && order=$(echo $arms | tr ' ' '\n' | tac | tr '\n' ' ')
  for arm in $order; do
    [ "$(left)" -gt 30 ] || break
    v=${arm%%:*}; t=${arm#*:}
    bin=build-gpu/apps/resnet50_benchmark; [ $v = old ] && bin=/tmp/build-old/apps/resnet50_benchmark
    share=auto; case $v in fixed*) share=${v#fixed} ;; esac
    run "$v-t$t-$i" $bin --loader-threads "$t" --host-decode-share $share
  done
done
finish
