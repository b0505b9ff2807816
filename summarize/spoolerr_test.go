package summarize_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/summarize"
)

var errDiskFull = errors.New("no space left on device")

// fullRows is all-runs.json's rows file on a full disk.
type fullRows struct{}

func (fullRows) Read(p []byte) (int, error)                { return 0, errDiskFull }
func (fullRows) Write(p []byte) (int, error)               { return 0, errDiskFull }
func (fullRows) Seek(off int64, whence int) (int64, error) { return 0, nil }

// fullTraces is the pictures' trace file on a full disk.
type fullTraces struct{}

func (fullTraces) ReadAt(p []byte, off int64) (int, error)  { return 0, errDiskFull }
func (fullTraces) WriteAt(p []byte, off int64) (int, error) { return 0, errDiskFull }

// TestTemporaryFilesFailLoudly: a write to either temporary file --out
// keeps while the tree is read (all-runs.json's leg rows, the pictures'
// traces) fails the summary, naming which, never a shorter all-runs.json
// or a picture without its points. (The command's size-limit test cannot
// tell which of the two fills first.)
func TestTemporaryFilesFailLoudly(t *testing.T) {
	tree := treesDir + "/clean-grid"
	if _, err := summarize.Summarize(tree, summarize.Options{Baseline: "vllm", Rows: fullRows{}}); err == nil ||
		!strings.Contains(err.Error(), "all-runs.json's leg rows: ") || !errors.Is(err, errDiskFull) {
		t.Errorf("rows on a full disk: %v", err)
	}
	if _, err := summarize.Summarize(tree, summarize.Options{Baseline: "vllm", Traces: true, TraceSpool: clocks.NewTraceSpool(fullTraces{})}); err == nil ||
		!strings.Contains(err.Error(), "the clock pictures' traces: ") || !errors.Is(err, errDiskFull) {
		t.Errorf("traces on a full disk: %v", err)
	}
}
