# Sourced by the programs' bad-input tests. check_usage_error <expected text> <command...>: the
# command must exit 2 with exactly one line on stderr containing the text, and leave none of
# the files named in the array `outputs` (which the caller sets; they are removed first).
failures=0

check_usage_error() {
  local expected=$1
  shift
  local err rc
  rm -f "${outputs[@]}"
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  local f left=""
  for f in "${outputs[@]}"; do [ -e "$f" ] && left=$f; done
  if [ "$rc" -ne 2 ]; then
    echo "FAIL: $* -> exit $rc, expected 2 ($err)"; failures=$((failures + 1))
  elif ! grep -qF -- "$expected" <<<"$err"; then
    echo "FAIL: $* -> message '$err' lacks '$expected'"; failures=$((failures + 1))
  elif [ "$(grep -c . <<<"$err")" -ne 1 ]; then
    echo "FAIL: $* -> more than one line: $err"; failures=$((failures + 1))
  elif [ -n "$left" ]; then
    echo "FAIL: $* -> left an output file ($left)"; failures=$((failures + 1))
  else
    echo "ok: $* -> $err"
  fi
}
