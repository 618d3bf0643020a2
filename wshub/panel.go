package wshub

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// panelFiles holds the browser panel: panel.css and whatever else sits beside it, and in
// js/ the parts that panel.js is joined from.
//
//go:embed panel
var panelFiles embed.FS

// panelParts are the parts of panel.js, files of panel/js, in the order they are joined.
// A part may use what the parts before it define, through the names its heading lists,
// and its heading's first line is its line in the table of parts at the top of panel.js.
// A new part is its file there and its name here, after the parts it uses.
var panelParts = []string{
	"wire.js",
	"text.js",
	"requests.js",
	"markdown.js",
	"questionset.js",
	"drafts.js",
	"question.js",
	"setview.js",
	"countdown.js",
	"notes.js",
	"keys.js",
	"approvaltext.js",
	"jsontext.js",
	"jsonview.js",
	"schemacheck.js",
	"approvalstate.js",
	"approvalforms.js",
	"approvalcard.js",
	"approvals.js",
	"inboxtext.js",
	"inbox.js",
	"panel.js",
	"attention.js",
	"connect.js",
}

// panelWrapper is the file of panel/js that holds the parts: panel.js's heading, where
// the line " * @parts" becomes the table of parts, and the one function they share, where
// the line "  // @code" becomes the parts.
const panelWrapper = "wrapper.js"

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
// are embedded in the program; panel.js is joined from its parts once, on the first call.
// Mount it under a prefix with [http.StripPrefix]:
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
		if err != nil {
			return nil
		}
		if d.IsDir() && p == "panel/js" {
			return fs.SkipDir // the parts of panel.js, which are not served alone
		}
		if d.IsDir() {
			return nil
		}
		if data, err := panelFiles.ReadFile(p); err == nil {
			addPanelFile(strings.TrimPrefix(p, "panel/"), data)
		}
		return nil
	})
	js, err := fs.Sub(panelFiles, "panel/js")
	if err == nil {
		var data []byte
		if data, err = joinPanel(js); err == nil {
			addPanelFile("panel.js", data)
		}
	}
	if err != nil {
		panic("wshub: joining panel.js: " + err.Error()) // the embedded files are broken
	}
}

func addPanelFile(name string, data []byte) {
	sum := sha256.Sum256(data)
	ext := strings.ToLower(path.Ext(name))
	ct := panelTypes[ext]
	if ct == "" {
		ct = mime.TypeByExtension(ext)
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	panelIndex[name] = &panelFile{
		data:        data,
		etag:        `"` + hex.EncodeToString(sum[:12]) + `"`,
		contentType: ct,
	}
}

// joinPanel makes panel.js of the wrapper and the parts in files: the wrapper's heading
// with the table of parts, then inside its function every part in order, each under a
// line that names its file.
func joinPanel(files fs.FS) ([]byte, error) {
	wrapper, err := fs.ReadFile(files, panelWrapper)
	if err != nil {
		return nil, err
	}
	var table, code bytes.Buffer
	for i, name := range panelParts {
		part, err := fs.ReadFile(files, name)
		if err != nil {
			return nil, err
		}
		first, _, _ := bytes.Cut(part, []byte("\n"))
		summary, ok := bytes.CutPrefix(first, []byte("// "))
		if !ok {
			return nil, fmt.Errorf("%s: the first line is not a // comment saying what the part holds", name)
		}
		fmt.Fprintf(&table, " *   %-15s %s\n", name, summary)
		if i > 0 {
			code.WriteString("\n")
		}
		banner := "// ==== " + name + " "
		code.WriteString(banner + strings.Repeat("=", max(4, 91-len(banner))) + "\n")
		code.Write(part)
		if !bytes.HasSuffix(part, []byte("\n")) {
			code.WriteString("\n")
		}
	}
	out := wrapper
	for _, m := range []struct{ marker, with string }{
		{" * @parts\n", table.String()},
		{"  // @code\n", code.String()},
	} {
		if bytes.Count(out, []byte(m.marker)) != 1 {
			return nil, fmt.Errorf("%s: the line %q is not there once", panelWrapper, strings.TrimSuffix(m.marker, "\n"))
		}
		out = bytes.Replace(out, []byte(m.marker), []byte(m.with), 1)
	}
	return out, nil
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
