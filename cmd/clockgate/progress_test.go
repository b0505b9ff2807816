package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/summarize"
)

// fakeClock advances by step on every reading.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Date(2026, 8, 12, 10, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(step); return t }
}

func TestProgressBarOnLargeTree(t *testing.T) {
	var buf bytes.Buffer
	b := newProgressBar(&buf, fakeClock(200*time.Millisecond))
	total := int64(400 << 20)
	for i := 1; i <= 400; i++ {
		b.update(summarize.Progress{LegsDone: i, LegsTotal: 400, BytesDone: int64(i) << 20, BytesTotal: total})
	}
	b.done()
	out := buf.String()
	if !strings.Contains(out, "\rsummarize [") || !strings.Contains(out, "/400 legs, ") || !strings.Contains(out, "/400 MiB, about ") {
		t.Fatalf("no progress drawn: %q", out)
	}
	if !strings.Contains(out, "2/400 legs, 2/400 MiB, about 1m19.6s left") {
		t.Fatalf("estimate off: %q", out[:200])
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Fatalf("line not cleared at the end: %q", out[len(out)-40:])
	}
}

func TestProgressBarSilentOnSmallOrFastTrees(t *testing.T) {
	var buf bytes.Buffer
	small := newProgressBar(&buf, fakeClock(time.Second))
	for i := 1; i <= 8; i++ {
		small.update(summarize.Progress{LegsDone: i, LegsTotal: 8, BytesDone: int64(i) << 10, BytesTotal: 8 << 10})
	}
	small.done()
	fast := newProgressBar(&buf, fakeClock(time.Millisecond))
	for i := 1; i <= 100; i++ {
		fast.update(summarize.Progress{LegsDone: i, LegsTotal: 100, BytesDone: int64(i) << 21, BytesTotal: 100 << 21})
	}
	fast.done()
	if buf.Len() != 0 {
		t.Fatalf("drew on a small or fast tree: %q", buf.String())
	}
}
