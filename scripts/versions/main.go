// Command versions keeps every module's requirements of its sibling modules in step with
// versions.txt, the version of each module of the repository. With no flag it checks, and
// exits with 1 naming every go.mod that differs; with -w it rewrites those go.mod files:
//
//	go run ./scripts/versions      # check
//	go run ./scripts/versions -w   # make the go.mod files agree with versions.txt
//	go run ./scripts/versions -tidy   # go mod tidy in every module
//
// go mod tidy ignores the workspace, so in a library module it would look for its
// siblings at their versions in versions.txt, which may not be published yet: -tidy runs
// it in every module with the siblings replaced by their directories for the while.
//
// A library module requires its siblings at their versions in versions.txt and has no
// replace of them (go.work points them at the tree during development); the examples and
// test modules, never a dependency, may keep their replaces. To change the versions, edit
// versions.txt and run with -w, or release with scripts/release, which does both.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/askuser-go/askuser/scripts/internal/modset"
)

func main() {
	write := flag.Bool("w", false, "rewrite the go.mod files to agree with versions.txt")
	tidy := flag.Bool("tidy", false, "run go mod tidy in every module, its siblings taken from the tree")
	flag.Parse()
	root, err := modset.Root()
	if err != nil {
		fail(err)
	}
	mods, err := modset.Read(root)
	if err != nil {
		fail(err)
	}
	if *write {
		changed, err := modset.Sync(root, mods)
		if err != nil {
			fail(err)
		}
		for _, d := range changed {
			fmt.Printf("versions: rewrote %s\n", d)
		}
	}
	if *tidy {
		if err := modset.Tidy(root, mods); err != nil {
			fail(err)
		}
	}
	problems, err := modset.Check(root, mods)
	if err != nil {
		fail(err)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Printf("versions: %d requirement(s) out of step with %s; go run ./scripts/versions -w rewrites them\n", len(problems), modset.File)
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "versions: %v\n", err)
	os.Exit(2)
}
