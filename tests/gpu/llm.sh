#!/usr/bin/env bash
# The LLM decode example on the device machine (issue 24), over a build
# folder made here: bash tests/gpu/llm.sh BUILD_DIR [quick]
# quick: two layers at a short context, two steps checked (about 20 s).
# Otherwise the four runs issue 24 asks for, each checked where the
# reference is affordable and timed: batch 1 and 4 at contexts 4096 and
# 32768 (a few minutes, most of it the host's random weights and the
# double reference).
set -uo pipefail
build=${1:-build}
host="$build/examples/llm_decode_host"
[ -x "$host" ] || { echo "llm: skipped: no $host"; exit 0; }
status=0
if [ "${2:-}" = quick ]; then
  "$host" --layers 2 --ctx 300 --tokens 8 --check 2 "$build/examples" || status=1
  "$host" --layers 2 --batch 4 --ctx 300 --tokens 8 --check 2 "$build/examples" || status=1
  exit $status
fi
"$host" --batch 1 --ctx 4096 --tokens 64 --check 2 "$build/examples" || status=1
"$host" --batch 4 --ctx 4096 --tokens 32 --check 1 "$build/examples" || status=1
"$host" --batch 1 --ctx 32768 --tokens 32 --check 0 "$build/examples" || status=1
"$host" --batch 4 --ctx 32768 --tokens 32 --check 0 "$build/examples" || status=1
exit $status
