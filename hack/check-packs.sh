#!/usr/bin/env bash
# Checks the policy packs under bundles/packs the way CI does: formatting, a strict compile,
# every pack's tests on their own, each pack building as an OPA bundle within its manifest
# roots, and test coverage of at least MIN_COVERAGE percent for every policy file.
# Usage: hack/check-packs.sh [pack...]   (default: every pack)
set -euo pipefail
cd "$(dirname "$0")/.."
MIN_COVERAGE=${MIN_COVERAGE:-90}
opa() { go tool opa "$@"; }

if (($# > 0)); then
	packs=("$@")
else
	packs=()
	for d in bundles/packs/*/; do packs+=("$(basename "$d")"); done
fi

echo "== opa fmt"
opa fmt --list --fail bundles
echo "== opa check --strict"
opa check --strict bundles/packs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in "${packs[@]}"; do
	dir=bundles/packs/$p
	echo "== $p: tests"
	opa test "$dir"
	echo "== $p: bundle"
	opa build --bundle "$dir" --output "$tmp/$p.tar.gz"
	echo "== $p: coverage"
	opa test "$dir" --coverage --format=json >"$tmp/$p.json"
	# Read the report with OPA itself, so the check needs nothing but go.
	low=$(opa eval --format=raw --stdin-input \
		"concat(\"\\n\", [sprintf(\"%s: %v%% < $MIN_COVERAGE%%\", [name, f.coverage]) | f := input.files[name]; not endswith(name, \"_test.rego\"); f.coverage < $MIN_COVERAGE])" <"$tmp/$p.json")
	if [[ -n "$low" ]]; then
		echo "coverage too low: $low" >&2
		exit 1
	fi
	opa eval --format=raw --stdin-input \
		'concat("\n", [sprintf("   %s: %v%%", [name, f.coverage]) | f := input.files[name]; not endswith(name, "_test.rego")])' <"$tmp/$p.json"
done
echo "ok"
