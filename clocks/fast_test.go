package clocks

import (
	"bytes"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"
)

// slowFold is the strict path: every line through ParseSample.
func slowFold(stream []byte) (*Fold, error) {
	f := NewFold()
	sc := NewScanner(bytes.NewReader(stream))
	for sc.Scan() {
		f.Add(sc.Sample(), sc.Line())
	}
	return f, sc.Err()
}

func sameFold(t *testing.T, stream []byte) {
	t.Helper()
	sameLines(t, stream)
	fast, ferr := FoldStream(bytes.NewReader(stream))
	slow, serr := slowFold(stream)
	if fmt.Sprint(ferr) != fmt.Sprint(serr) {
		t.Fatalf("errors differ:\nfast %v\nslow %v\nstream:\n%s", ferr, serr, stream)
	}
	if ferr != nil {
		return // a refused stream's fold is never used
	}
	fast.lastFast, slow.lastFast = nil, nil
	fast.shape, slow.shape = nil, nil
	fast.fastLines = 0
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("folds differ:\nfast %+v\nslow %+v\nstream:\n%s", fast, slow, stream)
	}
}

func TestFastPathEqualsStrictPath(t *testing.T) {
	ss := cleanWindow(bootF6)
	ss[4].ThrottleReasonsActive = "0x0000000000000004"
	ss[9].PersistenceMode = "Disabled"
	ss[20].DriverVersion = "590.44.01"
	ss[30].ClocksApplicationsGraphicsMHz = nil
	ss[31].TemperatureGPUC = ptr(61.5)
	ss[31].PowerDrawW = ptr(-0.0)
	ss[32].ClocksMemMHz = ptr(0)
	ss[33].ThrottleField = "clocks_event_reasons.active"
	base := streamOf(ss)
	sameFold(t, base)
	sameFold(t, base[:len(base)-1])  // whole final line without newline
	sameFold(t, base[:len(base)-30]) // torn
	for _, tc := range []struct{ from, to string }{
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":02470`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":2470.0`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":-2470`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":0`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":1e3`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz" : 2470`},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":101`},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":97,"utilization_gpu_pct":0`},
		{`"t":"2026-08-12T10:15:05.123Z"`, `"t":"2026-02-30T10:15:05.123Z"`},
		{`"t":"2026-08-12T10:15:05.123Z"`, `"t":"2026-08-12T24:15:05.123Z"`},
		{`"t":"2026-08-12T10:15:05.123Z"`, `"t":"2026-08-12T10:15:05Z"`},
		{`"t":"2026-08-12T10:15:05.123Z"`, `"t":"2026-08-12T10:15:05.123+02:00"`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA\u0020GB10"`},
		{`"gpu_name":"NVIDIA GB10"`, "\"gpu_name\":\"NVIDIA\xffGB10\""},
		{`"pstate":"P0"`, `"pstate":""`},
		{`"throttle_reasons_active":"0x0000000000000000"`, `"throttle_reasons_active":"0x0"`},
		{`"throttle_reasons_active":"0x0000000000000000"`, `"throttle_reasons_active":"0x00000000000000000"`},
		{`"throttle_reasons_active":"0x0000000000000000"`, `"throttle_reasons_active":"0xg"`},
		{`"clocks_applications_graphics_mhz":2418`, `"clocks_applications_graphics_mhz":nul`},
		{`"temperature_gpu_c":61.5`, `"temperature_gpu_c":1e999`},
		{`"temperature_gpu_c":61.5`, `"temperature_gpu_c":61.`},
		{`"power_draw_w":0`, `"power_draw_w":-`},
		{`"utilization_gpu_pct":97}`, `"utilization_gpu_pct":97,"extra":1}`},
		{`"utilization_gpu_pct":97}`, `"utilization_gpu_pct":97} `},
	} {
		for _, n := range []int{1, 2, 3, -1} {
			edited := bytes.Replace(base, []byte(tc.from), []byte(tc.to), n)
			if bytes.Equal(edited, base) {
				t.Fatalf("edit %q did not apply", tc.from)
			}
			t.Run(fmt.Sprintf("%s×%d", tc.to, n), func(t *testing.T) { sameFold(t, edited) })
		}
		// The same edit on one later line alone, where the fast path reads.
		lines := bytes.SplitAfter(base, []byte("\n"))
		for k := 1; k < len(lines); k++ {
			if edited := bytes.Replace(lines[k], []byte(tc.from), []byte(tc.to), 1); !bytes.Equal(edited, lines[k]) {
				ls := append([][]byte(nil), lines...)
				ls[k] = edited
				t.Run(fmt.Sprintf("%s@%d", tc.to, k+1), func(t *testing.T) { sameFold(t, bytes.Join(ls, nil)) })
				break
			}
		}
	}
}

// sameLines holds EachLine to Scanner: the same samples, in order, and the
// same error.
func sameLines(t *testing.T, stream []byte) {
	t.Helper()
	var fast, slow []string
	ferr := EachLine(bytes.NewReader(stream), func(v *LineView) error {
		at, err := v.Time()
		if err != nil {
			return err
		}
		fast = append(fast, fmt.Sprintf("%d %s %s %d %d %#x", v.Line, at.Format(time.RFC3339Nano), v.BootID, v.SMClockMHz, v.UtilizationGPUPct, v.ThrottleBits))
		return nil
	})
	sc := NewScanner(bytes.NewReader(stream))
	for sc.Scan() {
		s := sc.Sample()
		at, _ := time.Parse(time.RFC3339Nano, s.T)
		bits, _ := ParseThrottle(s.ThrottleReasonsActive)
		slow = append(slow, fmt.Sprintf("%d %s %s %d %d %#x", sc.Line(), at.Format(time.RFC3339Nano), s.BootID, s.SMClockMHz, s.UtilizationGPUPct, bits))
	}
	if fmt.Sprint(ferr) != fmt.Sprint(sc.Err()) {
		t.Fatalf("EachLine error %v, Scanner error %v", ferr, sc.Err())
	}
	if strings.Join(fast, "\n") != strings.Join(slow, "\n") {
		t.Fatalf("EachLine read\n%s\nScanner read\n%s", strings.Join(fast, "\n"), strings.Join(slow, "\n"))
	}
}

func TestEachLineStopsAtTheCallersError(t *testing.T) {
	n := 0
	err := EachLine(bytes.NewReader(streamOf(cleanWindow(bootF6))), func(v *LineView) error {
		if n++; n == 5 {
			return fmt.Errorf("enough")
		}
		return nil
	})
	if err == nil || err.Error() != "line 5: enough" {
		t.Fatalf("err = %v", err)
	}
}

// Random byte edits of a realistic stream: the fast path must refuse and
// accept exactly what the strict path does.
func TestFastPathEqualsStrictPathRandomEdits(t *testing.T) {
	ss := window(boot13, repeat([]int{2190, 2200, 2210}, 20), 10)
	base := streamOf(ss)
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte(`0123456789-.,:"{}[]eEx\ nulaZT` + "\xff\t")
	for i := 0; i < 3000; i++ {
		b := append([]byte(nil), base...)
		for k := 0; k < 1+rng.Intn(3); k++ {
			pos := rng.Intn(len(b))
			switch rng.Intn(3) {
			case 0:
				b[pos] = alphabet[rng.Intn(len(alphabet))]
			case 1:
				b = append(b[:pos], b[pos+1:]...)
			case 2:
				b = append(b[:pos], append([]byte{alphabet[rng.Intn(len(alphabet))]}, b[pos:]...)...)
			}
		}
		sameFold(t, b)
	}
}

// Every canonical line after the first takes the fast path: the sampler's
// own lines, with and without the optional keys, on GB10 and H100.
func TestFastPathTakesCanonicalLines(t *testing.T) {
	gb := window(boot13, repeat([]int{2190, 2200, 2210}, 20), 10)
	for i, s := range gb {
		if i%2 == 0 {
			s.TemperatureGPUC, s.PowerDrawW, s.ClocksMemMHz = ptr(61.0), ptr(41.52), ptr(4266)
			s.ThrottleField = "clocks_throttle_reasons.active"
		}
	}
	var hopper []*Sample
	for i := 0; i < 40; i++ {
		hopper = append(hopper, h100(i, boot2F, 1980, 100-i%2*100))
	}
	for _, ss := range [][]*Sample{gb, hopper} {
		f, err := FoldStream(bytes.NewReader(streamOf(ss)))
		if err != nil {
			t.Fatal(err)
		}
		if f.fastLines != f.Total-1 {
			t.Fatalf("fast path took %d of %d lines", f.fastLines, f.Total)
		}
	}
}

func TestFoldStreamErrorsNameTheLine(t *testing.T) {
	base := streamOf(cleanWindow(bootF6))
	lines := strings.SplitAfter(string(base), "\n")
	lines[6] = "{\"t\":1}\n"
	_, err := FoldStream(strings.NewReader(strings.Join(lines, "")))
	if err == nil || err.Error() != "line 7: t: want a string, found number 1" {
		t.Fatalf("err = %v", err)
	}
}

func BenchmarkFoldStream(b *testing.B) {
	stream := streamOf(window(boot13, repeat([]int{2190, 2200, 2210, 2195}, 900), 100))
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := FoldStream(bytes.NewReader(stream)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStrictFold(b *testing.B) {
	stream := streamOf(window(boot13, repeat([]int{2190, 2200, 2210, 2195}, 900), 100))
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := slowFold(stream); err != nil {
			b.Fatal(err)
		}
	}
}
