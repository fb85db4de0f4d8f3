#!/usr/bin/env bash
# The HTML report rendered by a real browser: gpuperf_report on the committed example results,
# then headless Chromium dumps the DOM (the SVG charts and bars must be there) and takes a
# screenshot (a PNG far larger than a blank page). SKIPPED (exit 77) without Chromium.
# Usage: render_report.sh <gpuperf_report> <repository root>
set -u
report=$1
root=$2
chromium=""
for candidate in /usr/bin/chromium /usr/bin/chromium-browser; do
  [ -x "$candidate" ] && chromium=$candidate
done
if [ -z "$chromium" ]; then
  echo "SKIPPED: Chromium is not installed (apt-get install chromium)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$report" "$root"/docs/examples/*.json -o "$work/report.html" >/dev/null || {
  echo "FAIL: gpuperf_report exited $?"; exit 1; }
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking
       --disable-component-update --disable-sync --no-first-run
       --user-data-dir="$work/profile" --window-size=1000,1400)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
"$chromium" "${flags[@]}" --dump-dom "file://$work/report.html" >"$work/dom.html" 2>/dev/null ||
  fail "chromium --dump-dom exited $?"
grep -q "<svg" "$work/dom.html" || fail "no <svg> in the rendered page"
grep -q '<rect class="bar"' "$work/dom.html" || fail "no bar in the rendered page"
grep -q '<polyline class="line"' "$work/dom.html" || fail "no line chart in the rendered page"
"$chromium" "${flags[@]}" --screenshot="$work/shot.png" "file://$work/report.html" \
  >/dev/null 2>&1 || fail "chromium --screenshot exited $?"
if [ "$(head -c 4 "$work/shot.png" 2>/dev/null | tail -c 3)" != "PNG" ]; then
  fail "the screenshot is not a PNG"
fi
# A blank page compresses to a few kB; charts and text make it far larger.
size=$(stat -c %s "$work/shot.png" 2>/dev/null || echo 0)
[ "$size" -gt 30000 ] || fail "the screenshot is $size bytes: the page looks blank"
[ "$failures" -eq 0 ] && echo "ok: rendered, $size-byte screenshot"
exit $((failures > 0))
