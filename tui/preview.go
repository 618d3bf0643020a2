package tui

import (
	"strings"

	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
	"github.com/charmbracelet/x/ansi"
)

// previews renders option previews (markdown) for the terminal with glamour, keeping
// each rendering: a view redraws on every keystroke and tick. Not safe for concurrent
// use; each view has its own.
type previews struct {
	cache map[previewKey]string
}

type previewKey struct {
	text  string
	width int
	style string
}

// render returns the markdown text rendered in width columns, in a glamour style
// ("dark", "light", "notty"). Model-written text is cleaned of control characters
// first, so that only glamour's own styling reaches the terminal.
func (p *previews) render(text string, width int, style string) string {
	if width < 10 {
		width = 10
	}
	k := previewKey{text, width, style}
	if out, ok := p.cache[k]; ok {
		return out
	}
	out := renderMarkdown(clean(text, true), width, style)
	if p.cache == nil {
		p.cache = make(map[previewKey]string)
	}
	p.cache[k] = out
	return out
}

func renderMarkdown(md string, width int, style string) string {
	plain := style == stylePlain
	if plain {
		// glamour's own plain style keeps the markdown marks (# and **), which a screen
		// reader would read out: render styled, then drop the styling.
		style = styleDark
	}
	r, err := glamour.NewTermRenderer(glamour.WithStyles(previewStyles[style]), glamour.WithWordWrap(width))
	if err == nil {
		var out string
		if out, err = r.Render(md); err == nil {
			if plain {
				out = ansi.Strip(out)
			}
			return strings.Trim(out, "\n")
		}
	}
	return md // the plain text is still a preview
}

// Glamour styles for the terminal's background, and plain text without styling.
const (
	styleDark  = styles.DarkStyle
	styleLight = styles.LightStyle
	stylePlain = "plain"
)

// previewStyles are glamour's own dark and light styles, headings aside: glamour
// writes "## " before a heading of level 2 and more, which reads as markdown left
// unrendered. Here a heading is told by its style alone (bold and coloured; level 1
// also on a background), as in the browser panel.
var previewStyles = map[string]gansi.StyleConfig{
	styleDark:  plainHeadings(styles.DarkStyleConfig),
	styleLight: plainHeadings(styles.LightStyleConfig),
}

func plainHeadings(c gansi.StyleConfig) gansi.StyleConfig {
	for _, h := range []*gansi.StyleBlock{&c.H2, &c.H3, &c.H4, &c.H5, &c.H6} {
		h.Prefix = ""
	}
	return c
}
