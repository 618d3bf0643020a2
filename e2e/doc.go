// Package e2e holds the end-to-end tests of the browser question panel: they build the
// web demo (examples/web), run it, and drive it in headless Chromium with chromedp. The
// package is its own module so that the library never depends on a browser driver.
//
//	cd e2e && go test ./...                      # needs chromium (apt-get install -y chromium)
//	cd e2e && E2E_SCREENSHOTS=1 go test ./...    # also rewrites docs/screenshots/*.png
package e2e
