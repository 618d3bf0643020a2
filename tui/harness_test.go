package tui_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/tui"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

// The tests drive the real terminal device: tui.Run on a pseudo-terminal, connected
// over a real WebSocket to a real wshub.Hub and askuser.Dispatcher on an httptest
// server. What the terminal draws goes through a terminal emulator (x/vt), so that
// the tests read the screen a person would see; keystrokes go in as the bytes a
// terminal sends.

// waitTimeout bounds every wait of a test; the tests poll, so a loaded machine only
// makes them slower.
const waitTimeout = 20 * time.Second

// Keys as a terminal sends them.
const (
	keyUp    = "\x1b[A"
	keyDown  = "\x1b[B"
	keyEnter = "\r"
	keyEsc   = "\x1b"
	keyCtrlC = "\x03"
	keySpace = " "
	keyBack  = "\x1b[Z" // shift+tab
	keyCtrlA = "\x01"
)

// server is a host: a dispatcher whose transport is a wshub hub, served with the
// browser panel's files and a tiny page on an httptest server. Any session named in
// the URL is let in, as in the demo.
type server struct {
	t   *testing.T
	d   *askuser.Dispatcher
	hub *wshub.Hub
	srv *httptest.Server
}

func newServer(t *testing.T, opts *askuser.Options) *server {
	t.Helper()
	// A device names its sessions with session=a,b, its person with &user= and their
	// groups with &groups=a,b.
	hub := wshub.New(&wshub.Options{Authenticate: func(r *http.Request) (wshub.Access, error) {
		q := r.URL.Query()
		id := q.Get("session")
		if id == "" {
			return wshub.Access{}, errors.New("no session")
		}
		var groups []string
		if g := q.Get("groups"); g != "" {
			groups = strings.Split(g, ",")
		}
		var sessions []askuser.SessionID
		for _, s := range strings.Split(id, ",") {
			sessions = append(sessions, wire.ParseSessionID(s))
		}
		return wshub.Access{User: q.Get("user"), Groups: groups, Sessions: sessions}, nil
	}})
	d := askuser.New(hub, opts)
	mux := http.NewServeMux()
	mux.Handle("/ws", hub)
	mux.Handle("/askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, panelPage)
	})
	s := &server{t: t, d: d, hub: hub, srv: httptest.NewServer(mux)}
	t.Cleanup(func() {
		d.Close()
		_ = hub.Close()
		s.srv.Close()
	})
	return s
}

// panelPage is the smallest page with the browser panel: one device of the session
// named in its URL.
const panelPage = `<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="/askuser/panel.css"><script src="/askuser/panel.js"></script></head>
<body><div id="questions"></div><script>
var session = new URLSearchParams(location.search).get("session");
window.client = AskUser.connect({url: "/ws?session=" + encodeURIComponent(session), container: document.getElementById("questions")});
</script></body></html>`

// wsURL is the hub's endpoint for a session.
func (s *server) wsURL(session string) string {
	return "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/ws?session=" + session
}

var sessions atomic.Int64

// newSession returns a fresh numeric session id.
func newSession() string { return fmt.Sprint(100 + sessions.Add(1)) }

// ask dispatches a tool call as an agent would, and returns where its result comes.
func (s *server) ask(session, id, arguments string) <-chan askuser.Result {
	ch := make(chan askuser.Result, 1)
	go func() {
		ch <- s.d.Dispatch(context.Background(), askuser.ToolCall{
			Session: wire.ParseSessionID(session), ID: id, Name: askuser.ToolName, Arguments: json.RawMessage(arguments),
		})
	}()
	return ch
}

// result waits for a tool call's result.
func (s *server) result(ch <-chan askuser.Result) askuser.Result {
	s.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitTimeout):
		s.t.Fatal("the tool call did not return")
		return askuser.Result{}
	}
}

// waitPending waits until the session has n pending question sets.
func (s *server) waitPending(session string, n int) {
	s.t.Helper()
	eventually(s.t, fmt.Sprintf("%d pending question sets", n), func() bool {
		return len(askusertest.Questions(s.d, wire.ParseSessionID(session))) == n
	})
}

// approve gates one of the host's own tool calls, as an agent loop does before it runs
// the tool, and returns where the gate's decision comes.
func (s *server) approve(session, id, tool, arguments string) <-chan askuser.ApprovalResult {
	ch := make(chan askuser.ApprovalResult, 1)
	go func() {
		ch <- s.d.Approve(context.Background(), askuser.ToolCall{
			Session: wire.ParseSessionID(session), ID: id, Name: tool, Arguments: json.RawMessage(arguments),
		}, nil)
	}()
	return ch
}

// decision waits for the gate's decision on a tool call.
func (s *server) decision(ch <-chan askuser.ApprovalResult) askuser.ApprovalResult {
	s.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitTimeout):
		s.t.Fatal("the gated tool call did not return")
		return askuser.ApprovalResult{}
	}
}

// waitApprovals waits until the session has n pending approvals.
func (s *server) waitApprovals(session string, n int) {
	s.t.Helper()
	eventually(s.t, fmt.Sprintf("%d pending approvals", n), func() bool {
		return len(askusertest.Approvals(s.d, wire.ParseSessionID(session))) == n
	})
}

// decideElsewhere decides an approval from another device of the session, one that is
// not a terminal (a browser panel, say).
func (s *server) decideElsewhere(session string, data wire.ApprovalResultData) {
	s.t.Helper()
	s.sendDecision(session, session, data)
}

// sendDecision sends data, a decision of an approval of session, from a device
// connected with query (the session, and who the device is).
func (s *server) sendDecision(query, session string, data wire.ApprovalResultData) {
	s.t.Helper()
	dev, err := tui.Dial(s.t.Context(), s.wsURL(query), nil)
	if err != nil {
		s.t.Fatal(err)
	}
	defer dev.Close()
	ev, err := wire.NewEvent(wire.EventApprovalResult, wire.ParseSessionID(session), data)
	if err == nil {
		err = dev.Send(s.t.Context(), ev)
	}
	if err != nil {
		s.t.Fatal(err)
	}
}

// endings hears the request ids Options.OnEnd is called with.
type endings chan string

func newEndings() endings { return make(endings, 8) }

func (e endings) options() *tui.Options { return &tui.Options{OnEnd: func(id string) { e <- id }} }

// next waits for the next OnEnd, which must be for want.
func (e endings) next(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-e:
		if got != want {
			t.Fatalf("OnEnd(%q), want OnEnd(%q)", got, want)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("OnEnd(%q) was never called", want)
	}
}

// term is one terminal device: tui.Run on a pseudo-terminal (100×40 unless said), its
// output read by a terminal emulator.
type term struct {
	t    *testing.T
	cols int
	ptm  *os.File // the terminal's side: keystrokes in, drawing out
	tty  *os.File // the program's side
	emu  *vt.Emulator
	mu   sync.Mutex // guards emu, raw, shown and shownAt
	raw  strings.Builder
	// shown is the screen as it was when raw had shownAt[0] bytes and the terminal was
	// shownAt[1]×shownAt[2]: polling a big screen costs, a wait polls often, and the
	// screen changes only when something is written or the terminal resized.
	shown   string
	shownAt [3]int
	done    chan error // Run's result
	wg      sync.WaitGroup
	// stop ends Run's context, as a host that stops its terminal device does.
	stop context.CancelFunc
}

const termCols, termRows = 100, 40

// newTerm starts tui.Run for a session of s, over a real WebSocket. opts may set
// Accessible and MaxCustomInput; the input, output and environment are the test's.
func newTerm(t *testing.T, s *server, session string, opts *tui.Options) *term {
	t.Helper()
	return newTermSized(t, s, session, opts, termCols, termRows)
}

// newTermSized is newTerm on a terminal of cols×rows.
func newTermSized(t *testing.T, s *server, session string, opts *tui.Options, cols, rows int) *term {
	t.Helper()
	ptm, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := pty.Setsize(ptm, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)}); err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, cols: cols, ptm: ptm, tty: tty, emu: vt.NewEmulator(cols, rows), done: make(chan error, 1)}

	tm.wg.Add(2)
	go func() { // the terminal draws what the program writes
		defer tm.wg.Done()
		buf := make([]byte, 32<<10)
		for {
			n, err := ptm.Read(buf)
			if n > 0 {
				tm.mu.Lock()
				tm.raw.Write(buf[:n])
				_, _ = tm.emu.Write(buf[:n])
				tm.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { // and answers the program's queries, as a terminal does
		defer tm.wg.Done()
		buf := make([]byte, 1024)
		for {
			n, err := tm.emu.Read(buf)
			if n > 0 {
				_, _ = ptm.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	tm.stop = cancel
	conn, err := tui.Dial(ctx, s.wsURL(session), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := tui.Options{}
	if opts != nil {
		o = *opts
	}
	o.Input, o.Output = tty, tty
	o.Environ = []string{"TERM=xterm-256color", "COLORTERM=truecolor"}
	go func() { tm.done <- tui.Run(ctx, conn, &o) }()

	t.Cleanup(func() {
		cancel()
		select {
		case err := <-tm.done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("tui.Run: %v", err)
			}
		case <-time.After(waitTimeout):
			t.Error("tui.Run did not return after its context ended")
		}
		_ = conn.Close()
		_ = tty.Close()
		_ = ptm.Close()
		// Ends the emulator's replies; Emulator.Close would race with the reading goroutine.
		_ = tm.emu.InputPipe().(*io.PipeWriter).Close()
		tm.wg.Wait()
	})
	return tm
}

// press sends keystrokes, one key at a time, as a person types them.
func (tm *term) press(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		if _, err := tm.ptm.Write([]byte(k)); err != nil {
			tm.t.Fatalf("typing %q: %v", k, err)
		}
		// A lone Esc is told from the start of a sequence by a pause, as in a terminal.
		time.Sleep(30 * time.Millisecond)
	}
}

// send sends a key that cannot be taken for the start of another (an arrow key, not
// Esc) at once; the test then waits for what it does.
func (tm *term) send(k string) {
	tm.t.Helper()
	if _, err := tm.ptm.Write([]byte(k)); err != nil {
		tm.t.Fatalf("typing %q: %v", k, err)
	}
}

// typeText types text a character at a time.
func (tm *term) typeText(s string) {
	tm.t.Helper()
	for _, r := range s {
		tm.press(string(r))
	}
}

// screen returns the visible screen as text, trailing spaces trimmed.
func (tm *term) screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	at := [3]int{tm.raw.Len(), tm.emu.Width(), tm.emu.Height()}
	if at != tm.shownAt || tm.shown == "" {
		tm.shown, tm.shownAt = tm.emu.String(), at // only a write or a resize changes the screen
	}
	return tm.shown
}

// rawOutput is everything the program wrote, escape sequences and all.
func (tm *term) rawOutput() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.raw.String()
}

// history returns every line the terminal has shown: the scrollback, then the screen.
func (tm *term) history() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	var b strings.Builder
	for y := 0; y < tm.emu.ScrollbackLen(); y++ {
		var line strings.Builder
		for x := 0; x < tm.cols; x++ {
			if c := tm.emu.ScrollbackCellAt(x, y); c != nil {
				line.WriteString(c.Content)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	b.WriteString(tm.emu.String())
	return b.String()
}

// waitScreen waits until the visible screen shows every one of texts, and returns it.
func (tm *term) waitScreen(texts ...string) string {
	tm.t.Helper()
	var last string
	ok := poll(func() bool {
		last = tm.screen()
		for _, s := range texts {
			if !strings.Contains(last, s) {
				return false
			}
		}
		return true
	})
	if !ok {
		tm.t.Fatalf("the screen never showed %q; it shows:\n%s", texts, last)
	}
	return last
}

// waitGone waits until the visible screen no longer shows text.
func (tm *term) waitGone(text string) string {
	tm.t.Helper()
	var last string
	if !poll(func() bool { last = tm.screen(); return !strings.Contains(last, text) }) {
		tm.t.Fatalf("the screen still shows %q:\n%s", text, last)
	}
	return last
}

// waitHistory waits until the terminal has shown text, on screen or scrolled off.
func (tm *term) waitHistory(text string) {
	tm.t.Helper()
	var last string
	if !poll(func() bool { last = tm.history(); return strings.Contains(last, text) }) {
		tm.t.Fatalf("the terminal never showed %q; it shows:\n%s", text, last)
	}
}

// noEscapes fails the test if the terminal was sent an escape sequence: the accessible
// mode redraws nothing, so that a screen reader reads it all once.
func (tm *term) noEscapes() {
	tm.t.Helper()
	tm.mu.Lock()
	raw := tm.raw.String()
	tm.mu.Unlock()
	if i := strings.IndexByte(raw, 0x1b); i >= 0 {
		tm.t.Fatalf("the accessible mode wrote an escape sequence: %q", raw[max(i-20, 0):min(i+20, len(raw))])
	}
}

// runEnded waits for tui.Run to return on its own, and returns its error.
func (tm *term) runEnded() error {
	tm.t.Helper()
	select {
	case err := <-tm.done:
		tm.done <- nil // for the cleanup
		return err
	case <-time.After(waitTimeout):
		tm.t.Fatal("tui.Run did not return")
		return nil
	}
}

// poll calls cond until it is true or waitTimeout passes.
func poll(cond func() bool) bool {
	deadline := time.Now().Add(waitTimeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !poll(cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// The tool-call arguments the tests ask with.
const (
	singleArgs = `{"questions":[{"question":"Which framework should we use?","header":"Framework","options":[
		{"label":"Vue 3 (Recommended)","description":"Matches the existing stack"},
		{"label":"React","description":"Larger ecosystem"}],"multiSelect":false}]}`
	multiArgs = `{"questions":[{"question":"Which features should we include?","header":"Features","options":[
		{"label":"Dark mode","description":"Light and dark themes"},
		{"label":"i18n support","description":"Several languages"},
		{"label":"Export to PDF","description":"PDF reports"}],"multiSelect":true}]}`
	previewArgs = `{"questions":[{"question":"Which layout do you prefer?","header":"Layout","options":[
		{"label":"Sidebar","description":"Navigation on the left","preview":"# Sidebar layout\n\n- **Nav** on the left\n- Content on the right\n\n` + "```" + `\n+------+----------+\n| nav  | content  |\n+------+----------+\n` + "```" + `"},
		{"label":"Top bar","description":"Navigation on top","preview":"## Top bar layout\n\n1. Nav across the top\n2. Content below\n\n### Fits few sections"}],"multiSelect":false}]}`
	twoArgs = `{"questions":[
		{"question":"Which database?","header":"Database","options":[{"label":"Postgres","description":"Relational"},{"label":"SQLite","description":"Embedded"}],"multiSelect":false},
		{"question":"Which extras?","header":"Extras","options":[{"label":"Metrics","description":"Prometheus"},{"label":"Tracing","description":"OpenTelemetry"}],"multiSelect":true}]}`
)

// answers decodes an answered tool result.
func answers(t *testing.T, r askuser.Result) []askuser.Answer {
	t.Helper()
	if r.Outcome != askuser.Answered {
		t.Fatalf("outcome %v, want answered; content %s", r.Outcome, r.Content)
	}
	var resp struct {
		Answers []askuser.Answer `json:"answers"`
	}
	if err := json.Unmarshal([]byte(r.Content), &resp); err != nil {
		t.Fatalf("tool result %s: %v", r.Content, err)
	}
	return resp.Answers
}
