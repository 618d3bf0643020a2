// Command release prepares a release of every library module at one version: it checks
// the tree, sets the version in versions.txt and in every go.mod, and prints the commit
// and the tags to push. It pushes nothing.
//
//	go run ./scripts/release -version v0.2.0
//
// It stops, changing nothing, unless CHANGELOG.md has a section "## vX.Y.Z", the work
// tree is clean (nothing to commit, no untracked file), gofmt has nothing to change, the
// go.mod files agree with versions.txt (go run ./scripts/versions), the API records are
// current (go run ./scripts/apirecord), and no module's tag for the version exists yet.
// Then it writes the version into versions.txt for every released module and does what
// go run ./scripts/versions -w does: every go.mod requires its siblings at the new
// version. The outside check (TestOutside, in test/release) then gets the modules at
// that version from the tree, as a user will; run it before tagging. docs/RELEASING.md
// has the whole procedure.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/askuser-go/askuser/scripts/internal/modset"
)

func main() {
	version := flag.String("version", "", "the version to release every library module at, such as v0.2.0")
	flag.Parse()
	if !modset.ValidVersion(*version) {
		fail(fmt.Errorf("-version %q: want a semantic version such as v0.2.0", *version))
	}
	root, err := modset.Root()
	if err != nil {
		fail(err)
	}
	if err := os.Chdir(root); err != nil {
		fail(err)
	}
	mods, err := modset.Read(root)
	if err != nil {
		fail(err)
	}

	var problems []string
	if out := output("git", "status", "--porcelain"); out != "" {
		status, _ := run("git", "status", "--short")
		problems = append(problems, "the work tree is not clean (commit first):\n"+status)
	}
	if out := output("sh", "-c", "gofmt -l $(git ls-files '*.go')"); out != "" {
		problems = append(problems, "gofmt would change:\n"+out)
	}
	if p, err := modset.Check(root, mods); err != nil || len(p) > 0 {
		problems = append(problems, fmt.Sprintf("the go.mod files are out of step with %s (go run ./scripts/versions -w): %v%s", modset.File, err, strings.Join(p, "\n")))
	}
	if _, err := run("go", "run", "./scripts/apirecord"); err != nil {
		problems = append(problems, err.Error())
	}
	if changelog, err := os.ReadFile("CHANGELOG.md"); err != nil || !bytes.Contains(changelog, []byte("\n## "+*version)) {
		problems = append(problems, "CHANGELOG.md has no section \"## "+*version+"\" (write and commit it first)")
	}
	var tags []string
	for i := range mods {
		if !mods[i].Released() {
			continue
		}
		mods[i].Version = *version
		tags = append(tags, mods[i].Tag())
		if output("git", "tag", "--list", mods[i].Tag()) != "" {
			problems = append(problems, "the tag "+mods[i].Tag()+" exists already")
		}
	}
	if len(problems) > 0 {
		fmt.Fprintln(os.Stderr, strings.Join(problems, "\n"))
		fmt.Fprintln(os.Stderr, "release: nothing changed")
		os.Exit(1)
	}

	if err := modset.Write(root, mods); err != nil {
		fail(err)
	}
	changed, err := modset.Sync(root, mods)
	if err != nil {
		fail(err)
	}
	if p, err := modset.Check(root, mods); err != nil || len(p) > 0 {
		fail(fmt.Errorf("the go.mod files still differ from %s: %v%s", modset.File, err, strings.Join(p, "\n")))
	}

	fmt.Printf("release: every library module at %s", *version)
	if len(changed) > 0 {
		fmt.Printf("; rewrote %s and %s", modset.File, strings.Join(changed, ", "))
	}
	fmt.Println(".")
	fmt.Println("Run the outside check, then commit, tag and push:")
	fmt.Println()
	fmt.Println("\t(cd test && go test -count=1 -run TestOutside ./release/)")
	if out := output("git", "status", "--porcelain"); out != "" {
		fmt.Printf("\tgit commit -am 'Release %s'\n", *version)
	}
	for _, t := range tags {
		fmt.Printf("\tgit tag %s\n", t)
	}
	fmt.Printf("\tgit push origin %s\n", strings.Join(tags, " "))
}

// run runs a command in the repository's root and returns its standard output, or an
// error with everything it printed.
func run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// output is run's output, trimmed; it stops the command when run fails.
func output(name string, args ...string) string {
	out, err := run(name, args...)
	if err != nil {
		fail(err)
	}
	return strings.TrimSpace(out)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "release: %v\n", err)
	os.Exit(2)
}
