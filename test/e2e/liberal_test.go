package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Calls accepted beyond the advertised schema, as real models send them, shown without
// breaking the layout: a header of 28 characters (advertised: 12) cut short on its chip,
// a header of 100 characters (the most accepted), a question of six options, one of
// them without a description, and a question of one option.

const (
	header28  = "Operational Context Details?"
	headerCJK = "选择一个合适的前端框架方" // 12 characters, as advertised: shown whole
)

var header100 = strings.Repeat("A header that goes on ", 5)[:100]

// liberalArgs are the arguments of the call: three questions.
func liberalArgs(t *testing.T) string {
	t.Helper()
	opts := []askuser.Option{{Label: "All details available"}}
	for _, l := range []string{"Need more info", "SMTP only", "Rate limits", "Database", "Everything else"} {
		opts = append(opts, askuser.Option{Label: l, Description: "What " + strings.ToLower(l) + " means here"})
	}
	raw, err := json.Marshal(askuser.Request{Questions: []askuser.Question{
		{Question: "Can you share more detail on the operational context?", Header: header28, Options: opts},
		{Question: "Which framework?", Header: headerCJK, Options: []askuser.Option{{Label: "Vue", Description: "v"}, {Label: "React", Description: "r"}}},
		{Question: "Go ahead with the plan?", Header: header100, Options: []askuser.Option{{Label: "Yes, go ahead", Description: "Start now"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// chipBox is what the page says of a question's header chip and of the boxes around it.
type chipBox struct {
	Text, Title              string
	Overflow                 string  // computed text-overflow
	Cut                      bool    // the text is wider than the chip
	Left, Top, Right, Bottom float64 // the chip's box
	RowLeft, RowRight        float64 // its question's box (the fieldset)
	LegendRight              float64
	TextTop, TextBottom      float64 // the first line of the question's text
	Options, Descriptions    int
	OptionsInside            bool // every option and the Other box within the question's box
	PageWidth, WindowWidth   float64
	ScrollX, ScrollY         float64 // the window's scroll, from the box's to the page's coordinates
	ChipRGB                  []float64
}

const chipJS = `((sel, qi) => {
	const p = document.querySelector(sel);
	const q = p.querySelectorAll('[data-testid="question"]')[qi];
	const chip = q.querySelector('[data-testid="header"]');
	// In the middle of the question's scrolling box, clear of the panel's sticky header.
	q.querySelector("legend").scrollIntoView({block: "center"});
	const r = (n) => n.getBoundingClientRect();
	const c = r(chip), f = r(q), legend = r(q.querySelector("legend"));
	const text = q.querySelector('[data-testid="question-text"]');
	const first = text.getClientRects()[0];
	const bg = getComputedStyle(chip).backgroundColor.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
	return {text: chip.textContent, title: chip.title, overflow: getComputedStyle(chip).textOverflow,
		cut: chip.scrollWidth > chip.clientWidth + 0.5,
		left: c.left, top: c.top, right: c.right, bottom: c.bottom, rowLeft: f.left, rowRight: f.right,
		textTop: first.top, textBottom: first.bottom, legendRight: legend.right,
		options: q.querySelectorAll('[data-testid="option"]').length,
		optionsInside: [...q.querySelectorAll('[data-testid="option"], [data-testid="other-input"]')].every(o => r(o).left >= f.left - 0.5 && r(o).right <= f.right + 0.5),
		descriptions: q.querySelectorAll('[data-testid="option-description"]').length,
		pageWidth: document.documentElement.scrollWidth, windowWidth: innerWidth, scrollX: scrollX, scrollY: scrollY, chipRGB: bg};
})`

// checkChips checks the three questions' chips in the panel that sel selects: each on
// its question's first line and within its box, the long ones cut short with an
// ellipsis and their whole text in the title and the text, the 12-character one whole;
// and the page not wider than the window. It then looks at the pixels: the chip's colour
// is painted exactly over the chip's box, and nowhere outside its question.
func checkChips(tb *tab, sel, where string) {
	tb.t.Helper()
	for qi, want := range []struct {
		header       string
		cut          bool
		options      int
		descriptions int
	}{{header28, true, 6, 5}, {headerCJK, false, 2, 2}, {header100, true, 1, 1}} {
		b := eval[chipBox](tb, chipJS+`(`+js(sel)+`, `+fmt.Sprint(qi)+`)`)
		what := fmt.Sprintf("%s, question %d (%q)", where, qi, want.header)
		if b.Text != want.header || b.Title != want.header {
			tb.t.Errorf("%s: the chip's text %q and title %q, want the whole header", what, b.Text, b.Title)
		}
		if b.Cut != want.cut || b.Overflow != "ellipsis" {
			tb.t.Errorf("%s: cut short %v (want %v), text-overflow %s", what, b.Cut, want.cut, b.Overflow)
		}
		if b.Left < b.RowLeft-0.5 || b.Right > b.RowRight+0.5 || b.Right > b.LegendRight+0.5 {
			tb.t.Errorf("%s: the chip (%.1f..%.1f) is not within its question (%.1f..%.1f) and legend (..%.1f)", what, b.Left, b.Right, b.RowLeft, b.RowRight, b.LegendRight)
		}
		if b.Bottom-b.Top > 21 || b.Bottom < b.TextTop || b.Top > b.TextBottom {
			tb.t.Errorf("%s: the chip (%.1f..%.1f) is not one line beside the question's first line (%.1f..%.1f)", what, b.Top, b.Bottom, b.TextTop, b.TextBottom)
		}
		if b.Options != want.options || !b.OptionsInside || b.Descriptions != want.descriptions {
			tb.t.Errorf("%s: %d options (want %d), within the question %v, %d descriptions shown (want %d)", what, b.Options, want.options, b.OptionsInside, b.Descriptions, want.descriptions)
		}
		if b.PageWidth > b.WindowWidth {
			tb.t.Errorf("%s: the page is %v wide in a %v window", where, b.PageWidth, b.WindowWidth)
		}
		tb.checkChipPixels(b, what)
	}
}

// checkChipPixels takes a screenshot of the chip's row, the window's whole width, and
// finds the pixels of the chip's background colour there: they must fill the chip's box
// (less its rounded ends) and none may be outside it.
func (tb *tab) checkChipPixels(b chipBox, what string) {
	tb.t.Helper()
	shot, err := chromedp.Call(tb.ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format:      page.CaptureScreenshotFormatPng,
		FromSurface: ptrTo(true),
		Clip:        &page.Viewport{X: b.ScrollX, Y: b.ScrollY + b.Top - 4, Width: b.WindowWidth, Height: b.Bottom - b.Top + 8, Scale: 1},
	})
	if err != nil {
		tb.t.Fatalf("%s: screenshot: %v", what, err)
	}
	img, err := png.Decode(bytes.NewReader(shot.Data))
	if err != nil {
		tb.t.Fatal(err)
	}
	px := float64(img.Bounds().Dx()) / b.WindowWidth // device pixels per CSS pixel
	minX, maxX, minY, maxY, n := math.MaxInt, -1, math.MaxInt, -1, 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			if near(img, x, y, b.ChipRGB) {
				minX, maxX, minY, maxY, n = min(minX, x), max(maxX, x), min(minY, y), max(maxY, y), n+1
			}
		}
	}
	if n == 0 {
		tb.t.Fatalf("%s: no pixel of the chip's colour %v in its row", what, b.ChipRGB)
	}
	// In CSS pixels, relative to the window.
	left, right := float64(minX)/px, float64(maxX+1)/px
	top, bottom := b.Top-4+float64(minY)/px, b.Top-4+float64(maxY+1)/px
	if left < b.Left-1 || right > b.Right+1 || top < b.Top-1 || bottom > b.Bottom+1 {
		tb.t.Errorf("%s: the chip is painted at %.1f..%.1f × %.1f..%.1f, outside its box %.1f..%.1f × %.1f..%.1f",
			what, left, right, top, bottom, b.Left, b.Right, b.Top, b.Bottom)
	}
	if right-left < (b.Right-b.Left)-2 || bottom-top < (b.Bottom-b.Top)-2 || right > b.RowRight {
		tb.t.Errorf("%s: the chip is painted at %.1f..%.1f × %.1f..%.1f; its box is %.1f..%.1f × %.1f..%.1f in a row ending at %.1f",
			what, left, right, top, bottom, b.Left, b.Right, b.Top, b.Bottom, b.RowRight)
	}
}

func ptrTo[T any](v T) *T { return &v }

// tap clicks c as a finger would: brought to the middle of the screen first, clear of
// sticky bars, and two frames later, since the panel brings a focused option into view
// at the next frame and a click made before would land where it is about to move from.
func tap(c chromedp.CSS) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+js(string(c))+`).scrollIntoView({block: "center"})`),
		chromedp.Evaluate[chromedp.Void](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())))`, chromedp.EvalAwaitPromise),
		chromedp.Click(c),
	)
}

// near reports whether the pixel at x, y is the colour c, give or take antialiasing.
func near(img image.Image, x, y int, c []float64) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	d := math.Abs(float64(r>>8)-c[0]) + math.Abs(float64(g>>8)-c[1]) + math.Abs(float64(b>>8)-c[2])
	return d <= 6
}

// TestLongHeaderAndManyOptions: at laptop size and on a phone, the panel shows the three
// questions without breaking its layout (see checkChips), and the sixth option, chosen,
// is the answer.
func TestLongHeaderAndManyOptions(t *testing.T) {
	args := liberalArgs(t)
	for _, size := range []struct {
		name   string
		w, h   int64
		mobile bool
	}{{"laptop", 1280, 800, false}, {"phone", 390, 844, true}, {"narrow phone", 320, 800, true}} {
		t.Run(size.name, func(t *testing.T) {
			tb := newTab(t)
			tb.viewport(size.w, size.h, size.mobile)
			tb.open(env.main, newSession())
			tb.say("/ask " + args)
			id := tb.newestPanel()
			checkChips(tb, `[data-testid="panel"][data-request-id=`+js(id)+`]`, size.name)
			tb.do("answering", tap(option(id, 0, 5)), tap(option(id, 1, 0)), tap(option(id, 2, 0)), tap(sel(id, `[data-testid="submit"]`)))
			want := content(t,
				askuser.Answer{Question: "Can you share more detail on the operational context?", SelectedLabels: []string{"Everything else"}},
				askuser.Answer{Question: "Which framework?", SelectedLabels: []string{"Vue"}},
				askuser.Answer{Question: "Go ahead with the plan?", SelectedLabels: []string{"Yes, go ahead"}},
			)
			if got := tb.toolResult(id); got != want {
				t.Fatalf("tool result = %s\nwant          %s", got, want)
			}
		})
	}
}

// TestLongHeaderOnTheLinkPage: the answer link's page, on a phone, shows the same call
// as well (see checkChips), and is answered there.
func TestLongHeaderOnTheLinkPage(t *testing.T) {
	_, _, id, b := askUnwatched(t, wire.EventAsk, "/ask "+liberalArgs(t))
	if b.Type != wire.EventAsk || b.RequestID != id {
		t.Fatalf("webhook %+v", b)
	}
	for _, size := range []struct{ w, h int64 }{{390, 844}, {320, 800}} {
		lt := newTab(t)
		lt.viewport(size.w, size.h, true)
		lt.do("opening the answer link", chromedp.Navigate(b.URL))
		if got := lt.newestPanel(); got != id {
			t.Fatalf("the link's page shows %q, want %q", got, id)
		}
		checkChips(lt, `[data-testid="panel"][data-request-id=`+js(id)+`]`, fmt.Sprintf("link page at %d px", size.w))
		if size.w == 320 {
			lt.do("answering on the link's page", tap(option(id, 0, 5)), tap(option(id, 1, 1)), tap(option(id, 2, 0)))
			if st := lt.state(id); !st.Submit {
				t.Fatalf("after choosing, Submit cannot send: %+v", st)
			}
			lt.do("submitting", tap(sel(id, `[data-testid="submit"]`)))
			waitFor[bool](lt, "the page's last word", `!document.querySelector(".askuser-link-done").hidden`)
		}
	}
}

// TestFreeTextAndNoHeader: a call in the shape of Unity's AskUser, as a model sends it
// ("questions" a JSON-encoded string, no header, no multiSelect, "type" and
// "placeholder"), is asked as it is: the free-text question has no chip and no options,
// only its box, named "Your answer" and showing the model's placeholder; the choice has
// no chip. Typed and chosen on a phone, the answers reach the model.
func TestFreeTextAndNoHeader(t *testing.T) {
	questions := `[{"question":"What art style should the blocks have?","type":"text","placeholder":"Flat 2D fantasy icons"},` +
		`{"question":"Layer the icons at run time?","type":"choice","options":[{"label":"At run time","description":"One base, seven icons"},{"label":"Baked","description":"Seven finished images"}]}]`
	args, err := json.Marshal(map[string]string{"questions": questions})
	if err != nil {
		t.Fatal(err)
	}
	tb := newTab(t)
	tb.viewport(390, 844, true)
	tb.open(env.main, newSession())
	tb.say("/ask " + string(args))
	id := tb.newestPanel()
	got := eval[map[string]any](tb, `(() => {
		const qs = [...document.querySelectorAll('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="question"]')];
		return {
			chips: qs.map(q => q.querySelectorAll('[data-testid="header"]').length),
			options: qs.map(q => q.querySelectorAll('[data-testid="option"]').length),
			label: qs[0].querySelector(".askuser-other-label").textContent,
			placeholder: qs[0].querySelector('[data-testid="other-input"]').placeholder,
			hint: qs[0].querySelector(".askuser-hint").textContent,
			otherLabel: qs[1].querySelector(".askuser-other-label").textContent,
			inside: qs.every(q => { const f = q.getBoundingClientRect(); return [...q.querySelectorAll("*")].every(e => { const r = e.getBoundingClientRect(); return r.width === 0 || (r.left >= f.left - 0.5 && r.right <= f.right + 0.5); }); }),
		};
	})()`)
	want := map[string]any{
		"chips": []any{0.0, 0.0}, "options": []any{0.0, 2.0}, "label": "Your answer",
		"placeholder": "Flat 2D fantasy icons", "hint": "Write your answer.", "otherLabel": "Other", "inside": true,
	}
	for k, v := range want {
		if mustJSON(got[k]) != mustJSON(v) {
			t.Errorf("%s = %s, want %s", k, mustJSON(got[k]), mustJSON(v))
		}
	}
	tb.screenshot("free-text")
	tb.do("answering", chromedp.SendKeys(other(id, 0), "Pixel art, retro JRPG"), tap(option(id, 1, 0)), tap(sel(id, `[data-testid="submit"]`)))
	typed := "Pixel art, retro JRPG"
	if got, want := tb.toolResult(id), content(t,
		askuser.Answer{Question: "What art style should the blocks have?", SelectedLabels: []string{}, CustomInput: &typed},
		askuser.Answer{Question: "Layer the icons at run time?", SelectedLabels: []string{"At run time"}},
	); got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
}
