package sampler

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	// The zone database, embedded: utc_offset_s and time_zone must be
	// right on a box without /usr/share/zoneinfo (a slim container).
	_ "time/tzdata"

	"github.com/clockgate/clockgate/clocks"
)

// hostZone is the host's zone and its IANA name where it can be known:
// $TZ when it names a zone, else what /etc/localtime links to; "" when
// neither says.
func hostZone() (*time.Location, string) {
	if tz, ok := os.LookupEnv("TZ"); ok {
		name := strings.TrimPrefix(tz, ":")
		if name == "" {
			return time.UTC, "UTC"
		}
		if loc, err := time.LoadLocation(name); err == nil {
			return loc, name
		}
		return time.Local, ""
	}
	if target, err := filepath.EvalSymlinks("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(filepath.ToSlash(target), "zoneinfo/"); ok {
			if loc, err := time.LoadLocation(name); err == nil {
				return loc, name
			}
		}
	}
	return time.Local, ""
}

// stampZone writes the host's UTC offset at the window's first sample and
// its zone's name into the record's window (SPEC §10.2): what places a
// bench client's wall-clock date in time.
func stampZone(w *clocks.Window, loc *time.Location, name string) {
	t, err := time.Parse(time.RFC3339Nano, w.FirstT)
	if err != nil {
		return
	}
	_, off := t.In(loc).Zone()
	w.UTCOffsetS, w.TimeZone = &off, name
}
