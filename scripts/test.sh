#!/usr/bin/env bash
# The project's test command: formatting, vet, staticcheck, the race-enabled tests of
# every module, a short run of each fuzz target, one pass of every benchmark, and the
# end-to-end tests in headless Chromium. Run it from anywhere in the repository:
#
#   bash scripts/test.sh
#
# Environment: FUZZTIME (default 4s) per fuzz target; SKIP_E2E=1 skips the browser tests
# (CI never sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
export PATH="$(go env GOPATH)/bin:$PATH"
fuzztime="${FUZZTIME:-4s}"
modules=(. bench e2e)

step() { printf '\n== %s\n' "$*"; }

step "gofmt"
unformatted="$(gofmt -l $(git ls-files '*.go'))"
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go vet and staticcheck"
if ! command -v staticcheck >/dev/null 2>&1; then
	go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi
for m in "${modules[@]}"; do
	[ -f "$m/go.mod" ] || continue
	(cd "$m" && go vet ./... && staticcheck ./...)
done

step "fuzz targets, $fuzztime each"
for target in .:FuzzParseArguments .:FuzzDeviceMessage .:FuzzCheckAnswers .:FuzzEnvelope .:FuzzQuickSchemaAgreesWithSchema .:FuzzDecodeJSONMatchesDecoder .:FuzzParseArgumentsFastAgreesWithSlow .:FuzzResultDataFastAgreesWithDecoder .:FuzzEncodersAgreeWithMarshal .:FuzzScannerStringAgreesWithUnmarshal ./wshub:FuzzInbound; do
	pkg="${target%%:*}" name="${target#*:}"
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" | grep -v '^fuzz: elapsed' || exit 1
done

step "benchmarks, one iteration each"
if [ -f bench/go.mod ]; then
	(cd bench && go test -run '^$' -bench . -benchtime 1x -benchmem ./...)
fi

if [ "${SKIP_E2E:-}" != 1 ] && [ -f e2e/go.mod ]; then
	step "end-to-end tests in headless Chromium"
	if ! command -v chromium >/dev/null 2>&1; then
		if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
			echo "chromium is missing: installing Debian's chromium"
			apt-get update -qq
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
		else
			echo "chromium is missing: install it (apt-get install chromium) and run again"; exit 1
		fi
	fi
	(cd e2e && go test -count=1 ./...)
fi

step "unit and integration tests, with the race detector"
go test -race -count=1 ./...
