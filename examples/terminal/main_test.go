package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

// TestExampleOnATerminal runs the example as a person would, on a pseudo-terminal:
// it serves the page, shows each question and the approval in the terminal, takes the
// answers and the decision typed there, prints the tool results and exits.
func TestExampleOnATerminal(t *testing.T) {
	ex := startExample(t)
	wait, press := ex.wait, ex.press

	// The page is served where the example says.
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(wait("Browser panel: http://"))
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(bufio.NewReader(resp.Body))
	resp.Body.Close()
	if !strings.Contains(string(body), "AskUser") && !strings.Contains(string(body), "/askuser/panel.js") {
		t.Fatalf("the page at %s is not the panel page:\n%s", url, body)
	}

	wait("Which framework should we use for the new module?")
	press("\x1b[B", "\r") // React
	wait("Which features should the first release include?")
	press("\x01", "\r") // ctrl+a: every option, not Other (which would open its box)
	if screen := wait("Preview: Sidebar (Recommended)"); strings.Contains(screen, "## ") {
		t.Errorf("the preview shows a heading's marks:\n%s", screen)
	}
	press("\r")
	wait("Which database should we start with?")
	press("\r")
	wait("Which checks should CI run?")
	press(" ", "\r")
	wait("How should we name the service?")
	press("\x1b") // decline the set
	wait("Tool: delete_branch")
	wait(`"name": "feature/old-login"`)
	press("\r") // approve
	wait("that is all")
	ex.exit("after its last call")
	out := ex.output()
	for _, want := range []string{`"selectedLabels":["React"]`, `"selectedLabels":["Dark mode","i18n support","Export to PDF","Offline mode"],"customInput":null`, `(declined): {"error": "User declined to answer"}`,
		`tool result (approved): {"deleted":"feature/old-login"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %s", want)
		}
	}
	// Each closing note comes before the agent's next line.
	for _, pair := range [][2]string{
		{"Answered.", "agent: Which features"},
		{"Declined.", "agent: Last, I clean up"},
		{"Approved.", "agent: that is all"},
	} {
		note, next := strings.Index(out, pair[0]), strings.Index(out, pair[1])
		if note < 0 || next < 0 || note > next {
			t.Errorf("the note %q (at %d) does not come before %q (at %d)", pair[0], note, pair[1], next)
		}
	}
}

// TestMultiSelectHelpSaysSpace: the hint of a multi-select question and the key help
// under it name the same key.
func TestMultiSelectHelpSaysSpace(t *testing.T) {
	ex := startExample(t)
	ex.wait("Which framework should we use for the new module?")
	ex.press("\r")
	ex.wait("Which features should the first release include?")
	// The key help is the form's last line: wait until the form is drawn down to it.
	screen := ex.waitFor("the key help under the multi-select", func(s string) bool {
		return strings.Count(s, "toggle") >= 2
	})
	if !strings.Contains(screen, "space toggles") || !strings.Contains(screen, "space toggle") || strings.Contains(screen, "x toggle") {
		t.Errorf("the hint and the key help disagree on the key that toggles:\n%s", screen)
	}
}

// TestSIGTERMClosesTheForm: on SIGTERM while a form is shown, the question is
// cancelled, the form closes with its note, the agent says it stopped, and the example
// exits cleanly.
func TestSIGTERMClosesTheForm(t *testing.T) {
	ex := startExample(t)
	ex.wait("Which framework should we use for the new module?")
	if err := ex.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ex.exit("after SIGTERM")
	out := ex.output()
	note, stopped := strings.Index(out, "Cancelled."), strings.Index(out, "agent: stopped")
	if note < 0 || stopped < 0 || note > stopped {
		t.Errorf("after SIGTERM, want the form's note \"Cancelled.\" then the agent's \"agent: stopped\"; the screen shows:\n%s", ex.screen())
	}
}

// example is the example running on a pseudo-terminal, drawn by a terminal emulator.
type example struct {
	t          *testing.T
	cmd        *exec.Cmd
	exited     chan error
	mu         sync.Mutex
	emu        *vt.Emulator
	transcript strings.Builder
	ptm        *os.File
	drained    chan struct{} // closed once everything the example wrote has been read
}

// startExample builds and starts the example on a pseudo-terminal of 110×40.
func startExample(t *testing.T) *example {
	bin := filepath.Join(t.TempDir(), "terminal")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building the example: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-timeout", "2m")
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	ptm, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 110})
	if err != nil {
		t.Fatal(err)
	}
	ex := &example{t: t, cmd: cmd, exited: make(chan error, 1), emu: vt.NewEmulator(110, 40), ptm: ptm, drained: make(chan struct{})}
	go func() { ex.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = ptm.Close()
	})
	// The terminal: an emulator that draws the output and answers the program's queries.
	go func() {
		defer close(ex.drained) // the read fails once the example has exited and all is read
		buf := make([]byte, 32<<10)
		for {
			n, err := ptm.Read(buf)
			ex.mu.Lock()
			_, _ = ex.emu.Write(buf[:n])
			ex.transcript.Write(buf[:n])
			ex.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { _, _ = io.Copy(ptm, ex.emu) }()
	t.Cleanup(func() { _ = ex.emu.InputPipe().(*io.PipeWriter).Close() })
	return ex
}

func (ex *example) screen() string {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.emu.String()
}

// output is everything the example wrote, escape sequences and all.
func (ex *example) output() string {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.transcript.String()
}

// wait waits until the screen shows text, and returns the screen.
func (ex *example) wait(text string) string {
	ex.t.Helper()
	return ex.waitFor(strconv.Quote(text), func(s string) bool { return strings.Contains(s, text) })
}

// waitFor waits until the screen satisfies shows, and returns the screen; what names
// what it waits for in the failure.
func (ex *example) waitFor(what string, shows func(screen string) bool) string {
	ex.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := ex.screen()
		if shows(s) {
			return s
		}
		if time.Now().After(deadline) {
			ex.t.Fatalf("the terminal never showed %s; it shows:\n%s", what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (ex *example) press(keys ...string) {
	for _, k := range keys {
		_, _ = ex.ptm.Write([]byte(k))
		time.Sleep(30 * time.Millisecond)
	}
}

// exit waits for the example to exit, successfully.
func (ex *example) exit(why string) {
	ex.t.Helper()
	select {
	case err := <-ex.exited:
		if err != nil {
			ex.t.Fatalf("the example failed %s: %v", why, err)
		}
	case <-time.After(30 * time.Second):
		ex.t.Fatalf("the example did not exit %s", why)
	}
	// What it wrote last may still wait in the pseudo-terminal: read it all.
	select {
	case <-ex.drained:
	case <-time.After(10 * time.Second):
		ex.t.Fatalf("the example's last output was never read, %s", why)
	}
}
