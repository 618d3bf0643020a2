package wshub

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// panelFiles holds the browser panel: panel.js, panel.css and whatever else sits beside them.
//
//go:embed panel
var panelFiles embed.FS

// panelTypes fixes the content types of the files a panel ships, rather than leaving
// them to the host's mime tables, which differ between systems.
var panelTypes = map[string]string{
	".css":   "text/css; charset=utf-8",
	".html":  "text/html; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".json":  "application/json",
	".map":   "application/json",
	".md":    "text/markdown; charset=utf-8",
	".png":   "image/png",
	".svg":   "image/svg+xml",
	".txt":   "text/plain; charset=utf-8",
	".woff2": "font/woff2",
}

type panelFile struct {
	data        []byte
	etag        string
	contentType string
}

var (
	panelOnce  sync.Once
	panelIndex map[string]*panelFile
)

// PanelHandler serves the browser panel's static files (panel.js, panel.css, ...), which
// are embedded in the program. Mount it under a prefix with [http.StripPrefix]:
//
//	mux.Handle("/askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
//
// and load it in a page with <script src="/askuser/panel.js"></script>. It answers GET
// and HEAD only, lists no directory, and sends every file with a fixed content type,
// X-Content-Type-Options: nosniff, a strong ETag, and Cache-Control: no-cache, so that a
// browser keeps its copy but checks it (a cheap 304) and never runs a stale panel against
// a newer server. The handler may be used concurrently.
func PanelHandler() http.Handler {
	panelOnce.Do(loadPanel)
	return http.HandlerFunc(servePanel)
}

func loadPanel() {
	panelIndex = make(map[string]*panelFile)
	_ = fs.WalkDir(panelFiles, "panel", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, err := panelFiles.ReadFile(p)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(data)
		ext := strings.ToLower(path.Ext(p))
		ct := panelTypes[ext]
		if ct == "" {
			ct = mime.TypeByExtension(ext)
		}
		if ct == "" {
			ct = "application/octet-stream"
		}
		panelIndex[strings.TrimPrefix(p, "panel/")] = &panelFile{
			data:        data,
			etag:        `"` + hex.EncodeToString(sum[:12]) + `"`,
			contentType: ct,
		}
		return nil
	})
}

func servePanel(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	f := panelIndex[name]
	if f == nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("ETag", f.etag)
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.data))
}
