package clocks

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/strictjson"
)

// The layouts other recorders write the same samples in.
var (
	// recorderOrder is another recorder's key order: names before ids,
	// the clock last.
	recorderOrder = strictjson.Layout{Order: []string{"gpu_name", "gpu_uuid", "gpu_index", "driver_version", "boot_id", "t",
		"pstate", "persistence_mode", "utilization_gpu_pct", "throttle_reasons_active", "clocks_applications_graphics_mhz",
		"clocks_max_sm_mhz", "sm_clock_mhz"}}
	// pythonDumps is json.dumps with its default separators.
	pythonDumps = strictjson.Layout{Comma: ", ", Colon: ": "}
)

// relayout writes each line of stream as layout says; eol ends each line.
func relayout(t testing.TB, stream []byte, layout func(line int) strictjson.Layout, eol string) []byte {
	t.Helper()
	var out []byte
	for i, line := range bytes.Split(bytes.TrimSuffix(stream, []byte("\n")), []byte("\n")) {
		v, err := strictjson.ParseObject(line)
		if err != nil {
			t.Fatal(err)
		}
		out = strictjson.AppendLayout(out, v, layout(i))
		out = append(out, eol...)
	}
	return out
}

// layouts are the same stream as other writers lay it out.
func layouts(t testing.TB, stream []byte) map[string][]byte {
	keys := append([]string(nil), keyNames[:]...)
	rng := rand.New(rand.NewSource(3))
	same := func(l strictjson.Layout) func(int) strictjson.Layout { return func(int) strictjson.Layout { return l } }
	return map[string][]byte{
		"sampler":           stream,
		"another key order": relayout(t, stream, same(recorderOrder), "\n"),
		"Python separators": relayout(t, stream, same(pythonDumps), "\n"),
		"CRLF":              bytes.ReplaceAll(stream, []byte("\n"), []byte("\r\n")),
		"key order every line": relayout(t, stream, func(int) strictjson.Layout {
			rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			return strictjson.Layout{Order: append([]string(nil), keys...)}
		}, "\n"),
		"spaced and reordered": relayout(t, stream, same(strictjson.Layout{Order: recorderOrder.Order, Comma: " ,\t", Colon: " : "}), " \r\n"),
	}
}

// richWindow is a window whose lines use every key: optional readings on
// some lines, a null applications clock on others, idle samples, a
// throttle bit.
func richWindow() []*Sample {
	ss := window(boot13, repeat([]int{2190, 2200, 2210}, 20), 10)
	for i, s := range ss {
		if i%2 == 0 {
			s.TemperatureGPUC, s.PowerDrawW, s.ClocksMemMHz = ptr(61.0), ptr(41.52), ptr(4266)
			s.ThrottleField = "clocks_throttle_reasons.active"
		}
	}
	ss[7].ThrottleReasonsActive = "0x0000000000000004"
	for i, s := range ss {
		if i%3 != 1 {
			s.EnforcedPowerLimitW = ptr(700.0)
			s.EventCountersUS = &Counters{SwPowerCap: int64(1000 * (i / 4)), SyncBoost: 0, SwThermal: 3, HwThermal: int64(i / 7), HwPowerBrake: 1 << 40}
		}
		if i%5 == 0 && i%3 != 1 {
			s.ModuleEnforcedPowerLimitW = ptr(900.5)
		}
	}
	return ss
}

// TestLayoutsFoldAlike: the same samples in any layout fold to the same
// record, byte for byte, and the reader agrees with the oracle on each.
func TestLayoutsFoldAlike(t *testing.T) {
	for _, ss := range [][]*Sample{richWindow(), cleanWindow(bootF6)} {
		base := streamOf(ss)
		want := recordJSON(t, NewFoldFrom(ss).mustRecord())
		for name, stream := range layouts(t, base) {
			t.Run(name, func(t *testing.T) {
				if name != "sampler" && bytes.Equal(stream, base) {
					t.Fatal("the layout changed nothing")
				}
				sameFold(t, stream)
				f, err := FoldStream(bytes.NewReader(stream))
				if err != nil {
					t.Fatal(err)
				}
				if got := recordJSON(t, f.mustRecord()); !bytes.Equal(got, want) {
					t.Fatalf("record\n%s\nwant\n%s", got, want)
				}
			})
		}
	}
}

// TestReaderAllocatesNothingPerLine: past its first line, a stream in any
// layout is read without allocating, so reading costs the same per line
// for 20 lines as for 2000.
func TestReaderAllocatesNothingPerLine(t *testing.T) {
	for name := range layouts(t, streamOf(richWindow())) {
		allocs := func(n int) float64 {
			stream := layouts(t, streamOf(window(boot13, repeat([]int{2190, 2200}, n/2), 0)))[name]
			return testing.AllocsPerRun(5, func() {
				r := NewReader(bytes.NewReader(stream), "")
				for r.Scan() {
				}
				if r.Err() != nil {
					t.Fatal(r.Err())
				}
			})
		}
		if few, many := allocs(20), allocs(2000); many > few {
			t.Errorf("%s: %v allocations for 2000 lines, %v for 20", name, many, few)
		}
	}
}

func TestReaderEqualsOracle(t *testing.T) {
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
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":-0`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":0`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":1e3`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":123456789012345678901234`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":9223372036854775807`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":1099511627776`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz" : 2470`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":"2470"`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":null`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":[2470]`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":{"v":2470}`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":true`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":NaN`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":-Infinity`},
		{`"sm_clock_mhz":2470`, `"sm_clock_mhz":Infinity`},
		{`"sm_clock_mhz":2470,`, ``},
		{`"gpu_index":0`, `"gpu_index":-1`},
		{`"gpu_index":0`, `"gpu_index":null`},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":101`},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":97,"utilization_gpu_pct":0`},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":97,"u\u0074ilization_gpu_pct":0`},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":97,"x":1,"x":2`},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":97,"x":{"a":1,"a":2}`},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":97,"x":[1,{"b":[null,true,false,"s\u00e9"]},-2.5e-3]`},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":97,"x":` + strings.Repeat("[", 70) + strings.Repeat("]", 70)},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":97,"x":` + strings.Repeat("[", 63) + strings.Repeat("]", 63)},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":97,"x":[1,]`},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":97,"x":tru`},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":97,`},
		{`"utilization_gpu_pct":97`, `"utilization_gpu_pct":97 "x":1`},
		{`"t":"2026-08-12T10:15:05.123Z"`, `"t":"2026-02-30T10:15:05.123Z"`},
		{`"t":"2026-08-12T10:15:05.123Z"`, `"t":"2026-08-12T24:15:05.123Z"`},
		{`"t":"2026-08-12T10:15:05.123Z"`, `"t":"2026-08-12T10:15:05Z"`},
		{`"t":"2026-08-12T10:15:05.123Z"`, `"t":"2026-08-12T10:15:05.123+02:00"`},
		{`"t":"2026-08-12T10:15:05.123Z"`, `"t":"2026-08-12T10:15:05.123456789Z"`},
		{`"t":"2026-08-12T10:15:05.123Z"`, `"t":"2026-08-12 10:15:05.123Z"`},
		{`"t":"2026-08-12T10:15:05.123Z"`, `"t":"2026-08-12T10:15:05.123"`},
		{`"t":"2026-08-12T10:15:05.123Z"`, `"\u0074":"2026-08-12T10:15:05.123Z"`},
		{`"t":"2026-08-12T10:15:05.123Z"`, "\"t\":\"2026-08-12T10:15:05.12\xffZ\""},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA\u0020GB10"`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA\uD83D\uDE00GB10"`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA\uD83DGB10"`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA\u00"`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA\qGB10"`},
		{`"gpu_name":"NVIDIA GB10"`, "\"gpu_name\":\"NVIDIA\xffGB10\""},
		{`"gpu_name":"NVIDIA GB10"`, "\"gpu_name\":\"NVIDIA\tGB10\""},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA GB10 with a name longer than forty bytes, quoted"`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":1`},
		{`"pstate":"P0"`, `"pstate":""`},
		{`"pstate":"P0"`, `"pstate":"P0","pstate":"P0"`},
		{`"pstate":"P0"`, `"pstate":"P0", "pstate":"P0"`},
		{`"persistence_mode":"Enabled"`, `"persistence_mode":"Enabled\u0000"`},
		{`"throttle_reasons_active":"0x0000000000000000"`, `"throttle_reasons_active":"0x0"`},
		{`"throttle_reasons_active":"0x0000000000000000"`, `"throttle_reasons_active":"0x00000000000000000"`},
		{`"throttle_reasons_active":"0x0000000000000000"`, `"throttle_reasons_active":"0xg"`},
		{`"clocks_applications_graphics_mhz":2418`, `"clocks_applications_graphics_mhz":nul`},
		{`"clocks_applications_graphics_mhz":2418`, `"clocks_applications_graphics_mhz":"[N/A]"`},
		{`"clocks_applications_graphics_mhz":2418`, `"clocks_applications_graphics_mhz":0`},
		{`"temperature_gpu_c":61.5`, `"temperature_gpu_c":1e999`},
		{`"temperature_gpu_c":61.5`, `"temperature_gpu_c":61.`},
		{`"temperature_gpu_c":61.5`, `"temperature_gpu_c":"61.5"`},
		{`"temperature_gpu_c":61.5`, `"temperature_gpu_c":null`},
		{`"power_draw_w":0`, `"power_draw_w":-`},
		{`"power_draw_w":0`, `"power_draw_w":1E+2`},
		{`"clocks_mem_mhz":0`, `"clocks_mem_mhz":-1`},
		{`"clocks_mem_mhz":0`, `"clocks_mem_mhz":null`},
		{`"clocks_mem_mhz":0`, `"clocks_mem_mhz":0.5`},
		{`"throttle_field":"clocks_event_reasons.active"`, `"throttle_field":null`},
		{`"throttle_field":"clocks_event_reasons.active"`, `"throttle_field":""`},
		{`"utilization_gpu_pct":97}`, `"utilization_gpu_pct":97,"extra":1}`},
		{`"utilization_gpu_pct":97}`, `"utilization_gpu_pct":97} `},
		{`"utilization_gpu_pct":97}`, `"utilization_gpu_pct":97}}`},
		{`"utilization_gpu_pct":97}`, `"utilization_gpu_pct":97`},
		{`{"t":`, `[{"t":`},
		{`{"t":`, "\xef\xbb\xbf{\"t\":"},
		{`{"t":`, ` {"t":`},
		{`{"t":`, `{ "t" :`},
		{`{"t":`, `{,"t":`},
		{`{"t":`, `{t:`},
	} {
		for _, n := range []int{1, 2, 3, -1} {
			edited := bytes.Replace(base, []byte(tc.from), []byte(tc.to), n)
			if bytes.Equal(edited, base) {
				t.Fatalf("edit %q did not apply", tc.from)
			}
			t.Run(fmt.Sprintf("%s×%d", tc.to, n), func(t *testing.T) { sameFold(t, edited) })
		}
		// The same edit on one later line alone.
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
	// Lines that are no object at all.
	for _, line := range []string{"", " ", "\t\r", "1", "null", `"x"`, "[]", "{}", "{", "}", "\x00", "\f", "NaN", "-", `{"t"}`, `{"t":}`, `{"t":"x"`} {
		sameFold(t, append(append([]byte(line), '\n'), base...))
		sameFold(t, append(append(bytes.Clone(base), line...), '\n'))
		sameFold(t, append(bytes.Clone(base), line...))
	}
}

// TestReaderEqualsOracleAtEveryCut: a line cut after every byte, alone and
// after a whole line, with and without its newline.
func TestReaderEqualsOracleAtEveryCut(t *testing.T) {
	full := gb10(1, boot13, 2470, 97)
	full.TemperatureGPUC, full.PowerDrawW, full.ClocksMemMHz, full.ThrottleField = ptr(48.25), ptr(40.5), ptr(4266), "clocks_throttle_reasons.active"
	for _, line := range [][]byte{full.AppendJSON(nil), relayout(t, append(full.AppendJSON(nil), '\n'), func(int) strictjson.Layout { return pythonDumps }, "")} {
		first := append(gb10(0, boot13, 2470, 97).AppendJSON(nil), '\n')
		for n := 0; n <= len(line); n++ {
			sameFold(t, append(bytes.Clone(first), line[:n]...))
			sameFold(t, append(append(bytes.Clone(first), line[:n]...), '\n'))
		}
	}
}

// Random byte edits of a realistic stream in every layout: the reader
// refuses and accepts exactly what the oracle does.
func TestReaderEqualsOracleRandomEdits(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte(`0123456789-.,:"{}[]eEx\ nulaZTtI` + "\xff\t\r\n\x00")
	for name, base := range layouts(t, streamOf(richWindow())) {
		t.Run(name, func(t *testing.T) {
			for i := 0; i < 600; i++ {
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
		})
	}
}

// Every stream of every shipped tree reads alike through the reader and
// the oracle, and so does each with a corrupted row: a byte changed,
// dropped or doubled, or a line duplicated or dropped.
func TestReaderEqualsOracleOnShippedTrees(t *testing.T) {
	streams, err := filepath.Glob("../testdata/trees/*/clocks/*/*/r*.samples.jsonl")
	if err != nil || len(streams) < 30 {
		t.Fatalf("found %d streams: %v", len(streams), err)
	}
	rng := rand.New(rand.NewSource(7))
	for _, p := range streams {
		stream, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sameFold(t, stream)
		lines := bytes.SplitAfter(stream, []byte("\n"))
		for i := 0; i < 10 && len(lines) > 1; i++ {
			ls := append([][]byte(nil), lines...)
			k := rng.Intn(len(ls) - 1)
			line := append([]byte(nil), ls[k]...)
			pos := rng.Intn(len(line))
			switch rng.Intn(5) {
			case 0:
				const alphabet = "0123456789\",:{}x. "
				line[pos] = alphabet[rng.Intn(len(alphabet))]
				ls[k] = line
			case 1:
				ls[k] = append(line[:pos], line[pos+1:]...)
			case 2:
				ls[k] = append(line[:pos], append([]byte{line[pos]}, line[pos:]...)...)
			case 3:
				ls = append(ls[:k], append([][]byte{ls[k]}, ls[k:]...)...)
			case 4:
				ls = append(ls[:k], ls[k+1:]...)
			}
			sameFold(t, bytes.Join(ls, nil))
		}
	}
}

func TestReaderErrorsNameFileLineAndColumn(t *testing.T) {
	base := streamOf(cleanWindow(bootF6))
	lines := strings.SplitAfter(string(base), "\n")
	for _, c := range []struct{ line, want string }{
		{"{\"t\":1}\n", "clocks/m/vllm/r1.samples.jsonl:7: t: want a string, found number 1"},
		{"{\"t\":\"x\",\"t\":2}\n", "clocks/m/vllm/r1.samples.jsonl:7:10: duplicate key \"t\""},
		{"{\"t\":01}\n", "clocks/m/vllm/r1.samples.jsonl:7:6: leading zero in a number"},
	} {
		ls := append([]string(nil), lines...)
		ls[6] = c.line
		r := NewReader(strings.NewReader(strings.Join(ls, "")), "clocks/m/vllm/r1.samples.jsonl")
		n := 0
		for r.Scan() {
			n++
		}
		var le *LineError
		if n != 6 || r.Err() == nil || r.Err().Error() != c.want || !errorsAs(r.Err(), &le) || le.Line != 7 {
			t.Fatalf("read %d, err = %v, want %q", n, r.Err(), c.want)
		}
	}
}

func errorsAs(err error, le **LineError) bool {
	e, ok := err.(*LineError)
	*le = e
	return ok
}

// BenchmarkReader reads one stream in each layout, for a look at its
// speed per byte: `go test -bench Reader ./clocks`.
func BenchmarkReader(b *testing.B) {
	base := streamOf(window(boot13, repeat([]int{2190, 2200, 2210, 2195}, 900), 100))
	for name, stream := range layouts(b, base) {
		b.Run(strings.ReplaceAll(name, " ", "-"), func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := FoldStream(bytes.NewReader(stream)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestNumberIsParseFloat holds the reader's exact path for short decimals
// to what strconv.ParseFloat reads, bit for bit, on random decimals of
// every length around the path's 15-digit edge, and on hand-picked ones.
func TestNumberIsParseFloat(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	cases := []string{"0.1", "-0.0", "0.0", "37.51", "699.99", "1.7976931348623157", "999999999999999.9",
		"99999999999999.9", "0.000000000000001", "0.0000000000000000000001", "0.00000000000000000000001",
		"123456789012345.0", "4.35", "1e2", "1.5E-3", "-12.75", "9007199254740993", "9007199254740993.0"}
	for range 200000 {
		intDigits, fracDigits := 1+rng.Intn(12), 1+rng.Intn(10)
		b := []byte{}
		if rng.Intn(4) == 0 {
			b = append(b, '-')
		}
		b = append(b, byte('1'+rng.Intn(9)))
		for range intDigits - 1 {
			b = append(b, byte('0'+rng.Intn(10)))
		}
		b = append(b, '.')
		for range fracDigits {
			b = append(b, byte('0'+rng.Intn(10)))
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		p := &lineParser{}
		p.b = []byte(c)
		n, err := p.number()
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		want, _ := strconv.ParseFloat(c, 64)
		if math.Float64bits(n.float) != math.Float64bits(want) {
			t.Fatalf("%s read as %v (%#x), strconv.ParseFloat gives %v (%#x)", c, n.float, math.Float64bits(n.float), want, math.Float64bits(want))
		}
	}
}

// TestStaticIDVouchesForIdentity: rows read with one learned layout whose
// identity fields are literals share a StaticID, and have the same
// identity fields; a layout where one of them changes from line to line
// (a GPU's UUID in a tensor-parallel stream, a driver edited mid-stream)
// gives StaticID 0.
func TestStaticIDVouchesForIdentity(t *testing.T) {
	ids := func(ss []*Sample) (map[uint64][]string, int) {
		r := NewReader(bytes.NewReader(streamOf(ss)), "")
		byID, zero := map[uint64][]string{}, 0
		for r.Scan() {
			row := r.Row()
			id := fmt.Sprintf("%s %s %s %s %d %v %d", row.BootID, row.GPUName, row.GPUUUID, row.DriverVersion, row.ClocksMaxSMMHz, row.AppsNull, row.AppsMHz)
			if row.StaticID == 0 {
				zero++
			} else {
				byID[row.StaticID] = append(byID[row.StaticID], id)
			}
		}
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		return byID, zero
	}
	same := window(boot13, repeat([]int{2190, 2200}, 50), 5)
	byID, zero := ids(same)
	if zero > 4 {
		t.Fatalf("%d of %d rows without a StaticID, want only those read to learn a layout", zero, len(same))
	}
	for id, rows := range byID {
		for _, r := range rows {
			if r != rows[0] {
				t.Fatalf("StaticID %d: identity %q and %q", id, rows[0], r)
			}
		}
	}
	for _, field := range []string{"gpu_uuid", "driver_version", "boot_id", "gpu_name", "clocks_max_sm_mhz", "clocks_applications_graphics_mhz"} {
		ss := window(boot13, repeat([]int{2190, 2200}, 50), 5)
		for i, s := range ss {
			switch field {
			case "gpu_uuid":
				s.GPUUUID = fmt.Sprintf("GPU-%d", i%2)
			case "driver_version":
				s.DriverVersion = fmt.Sprintf("580.%d", i%2)
			case "boot_id":
				s.BootID = fmt.Sprintf("%s%d", boot13[:35], i%2)
			case "gpu_name":
				s.GPUName = fmt.Sprintf("GPU %d", i%2)
			case "clocks_max_sm_mhz":
				s.ClocksMaxSMMHz = 3003 + i%2
			case "clocks_applications_graphics_mhz":
				s.ClocksApplicationsGraphicsMHz = ptr(2418 + i%2)
			}
		}
		byID, zero := ids(ss)
		if len(byID) != 0 || zero != len(ss) {
			t.Errorf("%s changing every line: StaticIDs %v, %d of %d rows without", field, byID, zero, len(ss))
		}
	}
}

// BenchmarkReaderAMD reads a stream of AMD samples (eight XCD clocks per
// line, null persistence mode and pstate), which the reader checks key by
// key: `go test -bench ReaderAMD ./clocks`.
func BenchmarkReaderAMD(b *testing.B) {
	stream := streamOf(amdWindow(boot13, repeat([]int{2080, 2090, 2100, 2085}, 900), 100))
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := FoldStream(bytes.NewReader(stream)); err != nil {
			b.Fatal(err)
		}
	}
}
