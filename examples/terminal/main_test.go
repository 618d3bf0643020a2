package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

// TestExampleOnATerminal runs the example as a person would, on a pseudo-terminal:
// it serves the page, shows each question in the terminal, takes the answers typed
// there, prints the tool results and exits.
func TestExampleOnATerminal(t *testing.T) {
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
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		_ = ptm.Close()
	}()

	// The terminal: an emulator that draws the output and answers the program's queries.
	emu := vt.NewEmulator(110, 40)
	var mu sync.Mutex
	var transcript strings.Builder
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := ptm.Read(buf)
			mu.Lock()
			_, _ = emu.Write(buf[:n])
			transcript.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { _, _ = io.Copy(ptm, emu) }()
	defer emu.InputPipe().(*io.PipeWriter).Close()

	screen := func() string {
		mu.Lock()
		defer mu.Unlock()
		return emu.String()
	}
	wait := func(text string) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := screen()
			if strings.Contains(s, text) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("the terminal never showed %q; it shows:\n%s", text, s)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	press := func(keys ...string) {
		for _, k := range keys {
			_, _ = ptm.Write([]byte(k))
			time.Sleep(30 * time.Millisecond)
		}
	}

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
	press(" ", "\r") // Dark mode
	wait("Preview: Sidebar (Recommended)")
	press("\r")
	wait("Which database should we start with?")
	press("\r")
	wait("Which checks should CI run?")
	press(" ", "\r")
	wait("How should we name the service?")
	press("\x1b") // decline the last set
	wait("that is all")

	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the example failed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the example did not exit after its last question")
	}
	mu.Lock()
	out := transcript.String()
	mu.Unlock()
	for _, want := range []string{`"selectedLabels":["React"]`, `"selectedLabels":["Dark mode"]`, `(declined): {"error": "User declined to answer"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %s", want)
		}
	}
}
