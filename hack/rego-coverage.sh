#!/usr/bin/env bash
# Checks per-file Rego test coverage: prints every policy file (not *_test.rego) with its
# percentage and fails when any is below the minimum.
# Usage:
#   go tool opa test --coverage --format=json policies | hack/rego-coverage.sh [MIN]
#   hack/rego-coverage.sh [MIN] DIR      (runs `go tool opa test --coverage` on DIR itself)
# MIN defaults to 90. The report is read with OPA itself, so the check needs nothing but go.
set -euo pipefail
cd "$(dirname "$0")/.."

min=90
dir=
for arg in "$@"; do
	if [[ $arg =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
		min=$arg
	elif [[ -d $arg ]]; then
		dir=$arg
	else
		echo "usage: $0 [MIN] [DIR]  (coverage JSON on stdin when DIR is not given)" >&2
		exit 2
	fi
done

report=$(mktemp)
trap 'rm -f "$report"' EXIT
if [[ -n $dir ]]; then
	go tool opa test --coverage --format=json "$dir" >"$report"
else
	cat >"$report"
fi

# One line per policy file: "ok|LOW  percent  file", sorted by file name.
lines=$(go tool opa eval --format=raw --stdin-input "concat(\"\\n\", [line |
	some name in sort(object.keys(input.files))
	not endswith(name, \"_test.rego\")
	pct := object.get(input.files[name], \"coverage\", 0)
	line := sprintf(\"%-3s %7v%%  %s\", [[\"ok\", \"LOW\"][to_number(pct < $min)], round(pct * 100) / 100, name])
])" <"$report")

if [[ -z $lines ]]; then
	echo "no policy files in the coverage report" >&2
	exit 1
fi
echo "$lines"
if grep -q '^LOW' <<<"$lines"; then
	echo "Rego coverage below ${min}% for the files marked LOW" >&2
	exit 1
fi
echo "Rego coverage: every policy file at or above ${min}%"
