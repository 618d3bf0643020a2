package demo

import (
	"embed"
	"errors"
	"io/fs"
)

//go:embed page/app.js page/app.css page/tools.js
var assets embed.FS

// PageWith returns the demo page's files: the script (app.js) and styles (app.css) that
// every demo shares, and tools.js, the cards of host tool calls for a page that has them
// (examples/web), under own, which holds the demo's index.html (and may replace any
// shared file by one of the same name). An index.html may give texts of its own, by
// language, in <script type="application/json" id="page-texts">{"en": {"title": ...},
// "zh": {...}}</script>: the script shows them in place of its own (the cluster demo's
// title and notice).
func PageWith(own fs.FS) fs.FS {
	shared, err := fs.Sub(assets, "page")
	if err != nil {
		panic(err) // a constant path of an embedded directory
	}
	return overlay{own, shared}
}

// overlay opens a name in the first of its file systems that has it.
type overlay []fs.FS

func (o overlay) Open(name string) (fs.File, error) {
	for _, fsys := range o {
		f, err := fsys.Open(name)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}
