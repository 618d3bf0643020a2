#!/usr/bin/env bash
# The project's test command: formatting, doc links, the modules' versions and API records,
# vet and staticcheck of every module, a short run of each fuzz target, one pass of every
# benchmark, the browser tests in headless Chromium, and the tests of every module,
# race-enabled but for the LLM SDK adapters.
# The modules are every directory with a go.mod that git knows, so a new one is tested
# without being named here. Run it from anywhere in the repository:
#
#   bash scripts/test.sh
#
# Environment:
#   FUZZTIME  how long each fuzz target runs; default 1000x (executions, not seconds: a
#             count has no deadline to race on a loaded machine, see docs/TESTING.md)
#   SKIP_E2E=1 skips the browser tests of test/e2e (CI never sets it); the terminal
#             device's one browser test still needs Chromium
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
export PATH="$(go env GOPATH)/bin:$PATH"
fuzztime="${FUZZTIME:-1000x}"
# Every module of the repository, the root first.
mapfile -t modules < <(git ls-files '*go.mod' 'go.mod' | xargs -n1 dirname | sort -u)

step() { printf '\n== %s (at %ds)\n' "$*" "$SECONDS"; }

step "gofmt"
unformatted="$(gofmt -l $(git ls-files '*.go'))"
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "doc links: every [Name] in a doc comment names something exported"
go run ./scripts/doclinks "${modules[@]}"

step "versions and API records: each go.mod against versions.txt, each api/*.txt against the exported API"
go run ./scripts/versions
go run ./scripts/apirecord

step "go vet and staticcheck: ${modules[*]}"
if ! command -v staticcheck >/dev/null 2>&1; then
	go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi
for m in "${modules[@]}"; do
	(cd "$m" && go vet ./... && staticcheck ./...)
done

step "fuzz targets, $fuzztime each"
# The targets are found with go test -list, package by package, in every module.
for m in "${modules[@]}"; do
	for pkg in $(cd "$m" && go list ./...); do
		for name in $(cd "$m" && go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
			echo "$pkg $name"
			(cd "$m" && go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" | grep -v '^fuzz: elapsed') || exit 1
		done
	done
done

step "benchmarks, one iteration each"
go test -run '^$' -bench . -benchtime 1x -benchmem ./...
(cd test && go test -run '^$' -bench . -benchtime 1x -benchmem ./bench/...)

step "Chromium, for the browser tests"
if ! command -v chromium >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "chromium is missing: installing Debian's chromium"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
	else
		echo "chromium is missing: install it (apt-get install chromium) and run again"; exit 1
	fi
fi
chromium --version

if [ "${SKIP_E2E:-}" != 1 ]; then
	step "end-to-end tests in headless Chromium"
	(cd test && go test -count=1 ./e2e/...)
fi

step "the tests of every other module"
# With the race detector, but for the packages built on large LLM SDKs (the adapters and
# their examples): their code is a thin, single-threaded conversion layer, and
# race-instrumenting those SDKs from a cold build cache would cost minutes each; their
# tests run without it, on the build go vet made. test/e2e ran above.
llmsdk='openai/openai-go|anthropics/anthropic-sdk-go|google\.golang\.org/genai|cloudwego/eino'
for m in "${modules[@]}"; do
	[ "$m" = . ] && continue
	# Each package with what it imports, directly or not (a failing go list stops the run).
	pkgs="$(cd "$m" && go list -f '{{.ImportPath}} {{join .Deps " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./...)"
	race=() plain=()
	while read -r pkg deps; do
		case "$pkg" in */test/e2e | */test/e2e/*) continue ;; esac
		if grep -qE "$llmsdk" <<<"$deps"; then plain+=("$pkg"); else race+=("$pkg"); fi
	done <<<"$pkgs"
	if [ ${#race[@]} -gt 0 ]; then (cd "$m" && go test -race -count=1 "${race[@]}"); fi
	if [ ${#plain[@]} -gt 0 ]; then (cd "$m" && go test -count=1 "${plain[@]}"); fi
done

step "the root module's tests, with the race detector"
go test -race -count=1 ./...

step "done"
