#!/usr/bin/env bash
# Regenerates the expected files of tests/golden from the current compiler.
# Usage: tests/update-golden.sh BUILD_DIR [NAME.ph ...]   (default: all)
# Read the diff before committing: a golden file is only as good as its review.
set -u
build=${1:?usage: update-golden.sh BUILD_DIR [files]}
shift
phobosc=$(cd "$build" && pwd)/src/phobosc
here=$(cd "$(dirname "$0")" && pwd)
for dir in diag ast plan; do
  cd "$here/golden/$dir" || exit 1
  for ph in *.ph; do
    [ -e "$ph" ] || continue
    if [ $# -gt 0 ]; then
      case " $* " in *" $ph "*|*"/$ph "*) ;; *) continue ;; esac
    fi
    args=()
    first=$(head -n1 "$ph")
    case "$first" in "// phobosc:"*) read -r -a args <<< "${first#// phobosc:}" ;; esac
    name=${ph%.ph}
    if [ "$dir" = plan ]; then
      "$phobosc" --diagnostics=plain --emit=plan "${args[@]}" "$ph" > "$name.plan"
      echo "exit: $?" >> "$name.plan"
    elif [ "$dir" = ast ]; then
      "$phobosc" --diagnostics=plain --emit=ast "${args[@]}" "$ph" > "$name.ast"
      echo "exit: $?" >> "$name.ast"
    else
      "$phobosc" --diagnostics=plain "${args[@]}" "$ph" 2> "$name.err" >/dev/null
      echo "exit: $?" >> "$name.err"
    fi
  done
done
