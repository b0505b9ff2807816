package sampler

import (
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// withHostZone stamps the host's zone into a record the test expects, as
// the sampler does into the one it writes.
func withHostZone(r *clocks.Record) {
	loc, name := hostZone()
	stampZone(&r.Window, loc, name)
}

// TestStampZone: the offset is the zone's at the window's first sample,
// so a window that starts in summer time says +02:00 in Europe/Berlin and
// one in winter +01:00; the embedded database answers where the box has
// no zoneinfo.
func TestStampZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		first string
		want  int
	}{{"2026-08-12T09:00:00.000Z", 7200}, {"2026-01-12T09:00:00.000Z", 3600}} {
		w := clocks.Window{FirstT: c.first}
		stampZone(&w, berlin, "Europe/Berlin")
		if w.UTCOffsetS == nil || *w.UTCOffsetS != c.want || w.TimeZone != "Europe/Berlin" {
			t.Errorf("%s: utc_offset_s %v, time_zone %q; want %d, Europe/Berlin", c.first, w.UTCOffsetS, w.TimeZone, c.want)
		}
	}
	t.Setenv("TZ", "America/New_York")
	if loc, name := hostZone(); name != "America/New_York" || loc.String() != "America/New_York" {
		t.Errorf("TZ=America/New_York: zone %s %q", loc, name)
	}
	t.Setenv("TZ", "")
	if loc, name := hostZone(); name != "UTC" || loc != time.UTC {
		t.Errorf("TZ empty: zone %s %q, want UTC", loc, name)
	}
}
