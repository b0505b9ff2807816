package report

import (
	"io"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// streamLine is what the picture reads from one stream line.
type streamLine struct {
	t time.Time
	// boot lies in the reader's buffer: valid only during the call.
	boot      []byte
	mhz, util int
	// bits is the throttle bit set.
	bits uint64
}

// readStream reads every line of a stream as a sample, in order, with
// clocks.EachLine: it accepts and refuses exactly what the contract's
// parser does, and reads the sampler's own lines in place, several times
// faster than the strict parser alone. Any bad line is an error.
func readStream(r io.Reader, each func(streamLine) error) error {
	return clocks.EachLine(r, func(v *clocks.LineView) error {
		t, err := v.Time()
		if err != nil {
			return err
		}
		return each(streamLine{t: t, boot: v.BootID, mhz: v.SMClockMHz, util: v.UtilizationGPUPct, bits: v.ThrottleBits})
	})
}
