// Package release checks the library's modules as a user gets them: from a module proxy,
// at the versions they are about to be released at, outside the repository, with no
// replace and no workspace (TestOutside). See docs/RELEASING.md.
package release
