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
  targets=(binary_roundtrip text_roundtrip fmt_stable check_binary check_text run_binary simplify_binary diff_binary opset_binary lsp_messages lsp_edits)
fi

# Seeds: binary models for the binary targets, texts for the text targets, and for the
# language server's targets the committed seeds of fuzz/lsp_seeds.py (message sequences,
# documents with edit scripts).
# Seeds are at most max_len bytes (longer ones libFuzzer would cut). The size is given in
# bytes (`c`): find rounds a size in M up to whole MiB, so `-size -1M` matched only empty
# files and the text targets started from nothing.
max_len=262144
seed() {
  local target="$1" kind="$2" dir="corpus/$1"
  mkdir -p "$dir"
  if [ "$kind" = binary ]; then
    find ../tests/corpus/handmade ../tests/corpus/real ../tests/corpus/contrib -name '*.onnx' -size "-$((max_len + 1))c" \
      -exec cp -n {} "$dir/" \;
    # onnxruntime's com.microsoft operators: one-node cases of every contrib kernel.
    find ../tests/fixtures/contrib_ops -name 'model.onnx' | while read -r m; do
      cp -n "$m" "$dir/contrib_$(basename "$(dirname "$m")").onnx"
    done
    find ../tests/corpus/node -name 'model.onnx' | awk 'NR % 10 == 0' | while read -r m; do
      cp -n "$m" "$dir/$(basename "$(dirname "$m")").onnx"
    done
  elif [ "$kind" = text ]; then
    find ../tests/fixtures ../lsp/tests/fixtures ../tui/tests/fixtures -name '*.onnxtxt' -size "-$((max_len + 1))c" \
      -exec cp -n {} "$dir/" \;
    # One text in ten of the corpus (onnx's node tests and the real models as text).
    find ../tests/corpus -name '*.onnxtxt' -size "-$((max_len + 1))c" | sort | awk 'NR % 10 == 0' | while read -r t; do
      cp -n "$t" "$dir/$(echo "${t#../tests/corpus/}" | tr / _)"
    done
  fi
  cp -n "seeds/$target/"* "$dir/" 2>/dev/null || true
  cp -n "regressions/$target/"* "$dir/" 2>/dev/null || true
  rm -f "$dir/.keep"
  # A target that starts from nothing finds little: fail rather than fuzz blind.
  local count
  count=$(find "$dir" -type f -size +0c | wc -l)
  if [ "$count" -lt 10 ]; then
    echo "fuzz/run.sh: $target has $count non-empty seeds in $dir; its seed selection is broken" >&2
    exit 1
  fi
  echo "== $target starts from $count seeds"
}

for target in "${targets[@]}"; do
  case "$target" in
    binary_roundtrip | check_binary | run_binary | simplify_binary | diff_binary | opset_binary) seed "$target" binary ;;
    lsp_messages | lsp_edits) seed "$target" own ;;
    *) seed "$target" text ;;
  esac
  echo "== fuzz $target for ${seconds}s"
  mkdir -p "artifacts/$target"
  if ! cargo +nightly fuzz run "$target" "corpus/$target" -- \
      -max_total_time="$seconds" -rss_limit_mb=2048 -max_len="$max_len" -timeout=10 \
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
