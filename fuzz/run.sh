#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 30), seeded from the committed corpus and
# the findings of earlier campaigns. A crash or a broken property stops with the input
# printed (hex) and saved under fuzz/artifacts/TARGET/; copy it into
# fuzz/regressions/TARGET/ once fixed, so that `cargo test` replays it.
#
#   bash fuzz/run.sh [SECONDS] [TARGET...]
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-30}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(binary_roundtrip text_roundtrip fmt_stable check_binary check_text run_binary lsp_messages lsp_edits)
fi

# Seeds: binary models for the binary targets, texts for the text targets, and for the
# language server's targets the committed seeds of fuzz/lsp_seeds.py (message sequences,
# documents with edit scripts).
seed() {
  local target="$1" kind="$2" dir="corpus/$1"
  mkdir -p "$dir"
  if [ "$kind" = binary ]; then
    find ../tests/corpus/handmade ../tests/corpus/real -name '*.onnx' -size -1M -exec cp -n {} "$dir/" \;
    find ../tests/corpus/node -name 'model.onnx' | awk 'NR % 10 == 0' | while read -r m; do
      cp -n "$m" "$dir/$(basename "$(dirname "$m")").onnx"
    done
  elif [ "$kind" = text ]; then
    find ../tests/fixtures ../lsp/tests/fixtures -name '*.onnxtxt' -size -1M -exec cp -n {} "$dir/" \;
  fi
  cp -n "seeds/$target/"* "$dir/" 2>/dev/null || true
  cp -n "regressions/$target/"* "$dir/" 2>/dev/null || true
  rm -f "$dir/.keep"
}

for target in "${targets[@]}"; do
  case "$target" in
    binary_roundtrip | check_binary | run_binary) seed "$target" binary ;;
    lsp_messages | lsp_edits) seed "$target" own ;;
    *) seed "$target" text ;;
  esac
  echo "== fuzz $target for ${seconds}s"
  mkdir -p "artifacts/$target"
  if ! cargo +nightly fuzz run "$target" "corpus/$target" -- \
      -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=262144 -timeout=10 \
      -artifact_prefix="artifacts/$target/" -print_final_stats=1 2>"artifacts/$target/log.txt"; then
    tail -n 60 "artifacts/$target/log.txt"
    for input in "artifacts/$target"/crash-* "artifacts/$target"/leak-* "artifacts/$target"/timeout-* "artifacts/$target"/oom-*; do
      [ -e "$input" ] || continue
      echo "-- $input:"
      od -A x -t x1z -v "$input" | head -n 40
    done
    exit 1
  fi
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|cov:' "artifacts/$target/log.txt" | tail -n 3 || true
done
