package treegen

import (
	"os"
	"path/filepath"
)

// realDir is where the real result files are committed, relative to the
// repository root.
const realDir = "testdata/bench-real"

// real puts the real result file src (relative to testdata/bench-real) at
// p, byte for byte.
func (t *tree) real(p, src string) {
	b, err := os.ReadFile(filepath.Join(repoRoot(), realDir, filepath.FromSlash(src)))
	if err != nil {
		panic(err)
	}
	t.put(p, b)
}

// repoRoot is the nearest directory at or above the working directory that
// holds go.mod and testdata/bench-real: the generator runs from the
// repository root (cmd/treegen) and from its own package (its tests).
func repoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for {
		_, errMod := os.Stat(filepath.Join(dir, "go.mod"))
		_, errReal := os.Stat(filepath.Join(dir, realDir))
		if errMod == nil && errReal == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("treegen: no directory holding go.mod and " + realDir + " at or above the working directory")
		}
		dir = parent
	}
}
