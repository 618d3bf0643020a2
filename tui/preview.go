package tui

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

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
// ("dark", "light", "plain"). Only glamour's own styling reaches the terminal: the
// model's text is cleaned of control characters, and of the character references
// (&#27;) that stand for them, before glamour reads it; and glamour's output keeps
// nothing but its colours and the text (safeRendering), so that a link's target is
// plain text beside its label, never a hidden hyperlink.
func (p *previews) render(text string, width int, style string) string {
	if width < 10 {
		width = 10
	}
	k := previewKey{text, width, style}
	if out, ok := p.cache[k]; ok {
		return out
	}
	out := renderMarkdown(withoutUnsafeReferences(clean(text, true)), width, style)
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
			out = safeRendering(out)
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

// previewStyles are glamour's own dark and light styles, but for two things. Glamour
// writes "## " before a heading of level 2 and more, which reads as markdown left
// unrendered: here a heading is told by its style alone (bold and coloured; level 1
// also on a background), as in the browser panel. And an image is its alt text
// ("Image: diagram"), without the address it would be loaded from.
var previewStyles = map[string]gansi.StyleConfig{
	styleDark:  previewStyle(styles.DarkStyleConfig),
	styleLight: previewStyle(styles.LightStyleConfig),
}

func previewStyle(c gansi.StyleConfig) gansi.StyleConfig {
	for _, h := range []*gansi.StyleBlock{&c.H2, &c.H3, &c.H4, &c.H5, &c.H6} {
		h.Prefix = ""
	}
	c.ImageText.Format = "Image: {{.text}}"
	c.Image.Format = "{{/* the image's address: not shown */}}"
	return c
}

// reference is a character reference as markdown decodes them: named, decimal or hex.
var reference = regexp.MustCompile(`&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);`)

// withoutUnsafeReferences drops each character reference that stands for a character
// clean drops: markdown decodes &#27; into an escape after clean has run. A numeric
// reference is judged by its number as well as by what HTML makes of it, so that no
// difference between two decoders lets one through.
func withoutUnsafeReferences(md string) string {
	if !strings.Contains(md, "&") {
		return md
	}
	return reference.ReplaceAllStringFunc(md, func(ref string) string {
		if num, ok := strings.CutPrefix(ref[1:len(ref)-1], "#"); ok {
			base := 10
			if num[0] == 'x' || num[0] == 'X' {
				num, base = num[1:], 16
			}
			n, err := strconv.ParseUint(num, base, 32)
			if err != nil || n > utf8.MaxRune || unsafeRune(rune(n), true) {
				return ""
			}
		}
		if s := html.UnescapeString(ref); clean(s, true) != s {
			return ""
		}
		return ref
	})
}

// sgr is a Select Graphic Rendition sequence: colours and text attributes, the only
// escape sequence glamour writes besides hyperlinks.
var sgr = regexp.MustCompile(`^\x1b\[[0-9;:]*m`)

// hyperlink is an OSC 8 hyperlink's start or end, up to its terminator (BEL or ST).
var hyperlink = regexp.MustCompile(`^\x1b\]8;[^\x07\x1b]*(?:\x07|\x1b\\)`)

// safeRendering keeps of glamour's output the text and its colours. OSC 8 hyperlinks
// go: glamour makes a link's label a hyperlink to the model's address (and writes the
// address after it as text, which stays). Any other escape sequence or control
// character, which glamour does not write, would be the model's: the escape is
// dropped, and what followed it shows as text.
func safeRendering(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '\x1b' {
			if m := sgr.FindString(s[i:]); m != "" {
				b.WriteString(m)
				i += len(m)
				continue
			}
			if m := hyperlink.FindString(s[i:]); m != "" {
				i += len(m)
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unsafeRune(r, true) {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
