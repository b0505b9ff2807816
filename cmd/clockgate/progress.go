package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/clockgate/clockgate/summarize"
)

const (
	// progressMinBytes is the size of clock streams from which a tree is
	// large enough to show progress for.
	progressMinBytes = 64 << 20
	// progressDelay is how long reading runs before the bar first shows,
	// so a fast run never flickers.
	progressDelay = 300 * time.Millisecond
	// progressEvery bounds how often the bar is redrawn.
	progressEvery = 100 * time.Millisecond
	progressWidth = 24
)

// progressBar draws summarize's progress on a terminal: legs and bytes
// read, and an estimate of the time left. Only a large tree gets one, and
// it clears its line when done.
type progressBar struct {
	w     io.Writer
	now   func() time.Time
	start time.Time
	last  time.Time
	drawn bool
}

func newProgressBar(w io.Writer, now func() time.Time) *progressBar {
	return &progressBar{w: w, now: now, start: now()}
}

// update draws p, at most every progressEvery, once progressDelay has passed.
func (b *progressBar) update(p summarize.Progress) {
	if p.BytesTotal < progressMinBytes || p.LegsDone == p.LegsTotal {
		return
	}
	now := b.now()
	elapsed := now.Sub(b.start)
	if elapsed < progressDelay || now.Sub(b.last) < progressEvery {
		return
	}
	b.last, b.drawn = now, true
	frac := float64(p.BytesDone) / float64(p.BytesTotal)
	left := "?"
	if frac > 0 {
		left = (time.Duration(float64(elapsed) * (1 - frac) / frac)).Round(100 * time.Millisecond).String()
	}
	filled := int(frac * progressWidth)
	fmt.Fprintf(b.w, "\rsummarize [%s%s] %d/%d legs, %d/%d MiB, about %s left\x1b[K",
		strings.Repeat("#", filled), strings.Repeat(".", progressWidth-filled),
		p.LegsDone, p.LegsTotal, p.BytesDone>>20, p.BytesTotal>>20, left)
}

// done clears the bar's line, if it drew one.
func (b *progressBar) done() {
	if b != nil && b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
}
