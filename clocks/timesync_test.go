package clocks

import (
	"os"
	"strings"
	"testing"
)

// TestParseChronyTrackingReal reads a line chronyc printed (testdata/chrony,
// SOURCE.md there): the offset, root delay and dispersion, stratum and leap
// status are the fields' own.
func TestParseChronyTrackingReal(t *testing.T) {
	data, err := os.ReadFile("testdata/chrony/tracking-synchronised.csv")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ParseChronyTracking(string(data))
	if err != nil {
		t.Fatal(err)
	}
	want := ChronyTracking{RefID: "43475A00", Stratum: 1, OffsetS: 0, RootDelayS: 0.000000001, RootDispersionS: 0.000001458, LeapStatus: "Normal", UpdateIntervalS: 0.5}
	if *tr != want {
		t.Fatalf("got %+v, want %+v", *tr, want)
	}
}

// TestParseChronyTrackingFields: the fields are read by position (offset
// the 5th, root delay the 11th, dispersion the 12th), and a line chronyc
// would not print is refused, naming the field.
func TestParseChronyTrackingFields(t *testing.T) {
	tr, err := ParseChronyTracking("C0A80001,ntp.example,2,1796304456.5,-0.000012345,0.000001,0.000002,1.5,0.001,0.01,0.002400000,0.000300000,64.2,Not synchronised\n")
	if err != nil {
		t.Fatal(err)
	}
	if tr.OffsetS != -0.000012345 || tr.RootDelayS != 0.0024 || tr.RootDispersionS != 0.0003 || tr.Stratum != 2 || tr.LeapStatus != "Not synchronised" || tr.UpdateIntervalS != 64.2 {
		t.Fatalf("got %+v", *tr)
	}
	for _, c := range []struct{ line, want string }{
		{"a,b,1,2,3", "want 14 comma-separated fields, found 5"},
		{"A,B,x,1,0,0,0,0,0,0,0,0,1,Normal", "field 3 (stratum)"},
		{"A,B,1,1,nan,0,0,0,0,0,0,0,1,Normal", "field 5 (system time offset)"},
		{"A,B,1,1,0,0,0,0,0,0,zz,0,1,Normal", "field 11 (root delay)"},
		{"A,B,1,1,0,0,0,0,0,0,0,inf,1,Normal", "field 12 (root dispersion)"},
		{"A,B,1,1,0,0,0,0,0,0,-0.1,0,1,Normal", "negative root delay"},
		{"A,B,1,1,0,0,0,0,0,0,0,0,1,", "leap status"},
	} {
		_, err := ParseChronyTracking(c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error with %q", c.line, err, c.want)
		}
	}
}
