package clocks

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// foldBoth folds stream through the line reader and in place, as a mapped
// file is read, and fails unless both say the same.
func foldBoth(t *testing.T, name string, stream []byte) {
	t.Helper()
	read := NewTracingFold()
	rerr := read.FoldStream(bytes.NewReader(stream), name)
	mapped := NewTracingFold()
	merr := mapped.foldMapped(stream, name)
	if fmt.Sprint(rerr) != fmt.Sprint(merr) {
		t.Fatalf("%s: read %v, in place %v", name, rerr, merr)
	}
	if rerr == nil && foldState(read) != foldState(mapped) {
		t.Fatalf("%s: folds differ:\nread     %s\nin place %s", name, foldState(read), foldState(mapped))
	}
}

// TestMappedReadsWhatTheReaderReads holds the in-place path to the line
// reader on every shipped stream, on the line-length edges with and
// without a final newline, on CRLF and blank-line streams, and on every
// stream of the corpus of bad inputs.
func TestMappedReadsWhatTheReaderReads(t *testing.T) {
	var streams []string
	for _, glob := range []string{"../testdata/trees/*/clocks/*/*/*.samples.jsonl", "../testdata/corpus/*/clocks/*/*/*.samples.jsonl",
		"../testdata/corpus/*.jsonl", "testdata/*.jsonl"} {
		m, _ := filepath.Glob(glob)
		streams = append(streams, m...)
	}
	if len(streams) < 50 {
		t.Fatalf("only %d streams found", len(streams))
	}
	for _, p := range streams {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		foldBoth(t, p, data)
		foldBoth(t, p+" (CRLF)", bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")))
		foldBoth(t, p+" (cut)", data[:len(data)*2/3])
	}
	line := fastLine(nil)
	pad := func(n int) []byte {
		b := append(bytes.Clone(line[:len(line)-1]), bytes.Repeat([]byte(" "), n-len(line))...)
		return append(b, '}')
	}
	for _, n := range []int{MaxLineBytes - 1, MaxLineBytes, MaxLineBytes + 1, MaxLineBytes + 2} {
		for _, tail := range []string{"\n", "", "\n\n"} {
			foldBoth(t, fmt.Sprintf("a %d-byte line%q", n, tail), append(pad(n), tail...))
			foldBoth(t, fmt.Sprintf("a line, then a %d-byte line%q", n, tail), append(append(bytes.Clone(line), '\n'), append(pad(n), tail...)...))
		}
	}
	foldBoth(t, "empty", nil)
	foldBoth(t, "a newline", []byte("\n"))
}

// TestLoadLegMapsLargeStreams reads a leg's stream from a memory map when
// it is large enough, and gives the leg the same verdict as a read one.
func TestLoadLegMapsLargeStreams(t *testing.T) {
	dir := t.TempDir()
	ss := cleanWindow(boot13)
	rec := recordJSON(t, recordOf(t, ss, StopPIDExit))
	must(t, os.WriteFile(filepath.Join(dir, "r1.summary.json"), rec, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "r1.samples.jsonl"), streamOf(ss), 0o644))
	lf := LegFiles{Name: "r1", RecordPath: filepath.Join(dir, "r1.summary.json"), StreamPath: filepath.Join(dir, "r1.samples.jsonl")}
	read := LoadLeg(lf)
	f, err := os.Open(lf.StreamPath)
	must(t, err)
	defer f.Close()
	if _, _, err := mapFile(f, 1<<40); err == nil {
		t.Fatal("a small stream was mapped")
	}
	data, unmap, err := mapFile(f, 0)
	if err != nil {
		t.Skipf("this system does not map files: %v", err)
	}
	if !bytes.Equal(data, streamOf(ss)) {
		t.Fatal("the mapping is not the file")
	}
	unmap()
	defer func(old int64) { mapMinBytes = old }(mapMinBytes)
	mapMinBytes = 0
	mapped := LoadLeg(lf)
	if !read.Eligible() || !mapped.Eligible() || foldState(read.Fold) != foldState(mapped.Fold) {
		t.Fatalf("read %+v\nmapped %+v", read.Reasons, mapped.Reasons)
	}
}

// TestMappedStreamThatShrinks: a stream cut short while it is read from
// its mapping faults on the pages it lost; that is the stream's error,
// and the process lives on.
func TestMappedStreamThatShrinks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r1.samples.jsonl")
	var stream []byte
	for len(stream) < 1<<20 {
		stream = append(stream, streamOf(cleanWindow(boot13))...)
	}
	must(t, os.WriteFile(path, stream, 0o644))
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	data, unmap, err := mapFile(f, 0)
	if err != nil {
		t.Skipf("this system does not map files: %v", err)
	}
	defer unmap()
	must(t, os.Truncate(path, 4096))
	err = NewFold().foldMapped(data, path)
	want := fmt.Sprintf("%s: the file shrank while it was read (%d bytes when it was opened)", path, len(stream))
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err %v", err)
	}
}
