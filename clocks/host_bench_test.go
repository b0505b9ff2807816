package clocks

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkFoldHostStream folds a host stream of $CLOCKGATE_HOST_BENCH
// (a PREFIX.host.jsonl), every reading busy.
func BenchmarkFoldHostStream(b *testing.B) {
	path := os.Getenv("CLOCKGATE_HOST_BENCH")
	if path == "" {
		b.Skip("CLOCKGATE_HOST_BENCH unset")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	ticks := BusyTicks{}
	for _, line := range bytes.Split(data, []byte("\n"))[1:] {
		if l, err := ParseHostLine(line); err == nil {
			ticks.Add(l.T, true)
		}
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := ticks
		if _, err := FoldHostStream(bytes.NewReader(data), path, &t); err != nil {
			b.Fatal(err)
		}
	}
}
