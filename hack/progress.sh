#!/usr/bin/env bash
# Reads `go build -v` output and prints a line every 100 packages, so a long build shows progress.
set -euo pipefail
name=${1:-build}
n=0
while IFS= read -r line; do
	case "$line" in
	*" "* | *:*) echo "$line" ;; # not a bare package path: a compiler or module message, passed through
	*) n=$((n + 1)); if ((n % 100 == 0)); then echo "  $name: $n packages compiled"; fi ;;
	esac
done
echo "  $name: done ($n packages compiled, the rest from the Go build cache)"
