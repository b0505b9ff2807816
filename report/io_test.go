package report

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReportReadsNoFile: report renders what summarize read; it opens no
// file of its own (the pictures come from each leg's trace, read in the
// same pass as its verdict).
func TestReportReadsNoFile(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch path {
			case "os", "io/fs", "io/ioutil", "path/filepath", "syscall":
				t.Errorf("%s imports %s: report reads no file", p, path)
			}
		}
	}
}
