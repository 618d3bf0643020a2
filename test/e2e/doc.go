// Package e2e holds the end-to-end tests of the browser question panel: they build the
// web demo (examples/web), run it, and drive it in headless Chromium with chromedp. It is
// in the test module, beside the benchmarks, so that the library never depends on a
// browser driver. From the repository's root:
//
//	go test ./test/e2e                      # needs chromium (apt-get install -y chromium)
//	E2E_SCREENSHOTS=1 go test ./test/e2e    # also rewrites docs/screenshots/*.png
package e2e
