package clocks

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/strictjson"
)

// The reader's oracle: the contract's sample, read by the strict JSON
// parser and then field by field, as clockgate read every stream before
// it had its own reader. Every test below holds Reader to it, line for
// line: the same samples, the same first defect, at the same place.

// oracleSample reads one line into a sample; col is the 1-based column of
// a syntax error, 0 for a field defect.
func oracleSample(line []byte) (s *Sample, col int, err error) {
	if isBlank(line) {
		return nil, 0, errors.New("empty line")
	}
	v, err := strictjson.ParseObject(line)
	if err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) {
			return nil, se.Offset + 1, errors.New(se.Msg)
		}
		return nil, 0, err
	}
	s, err = sampleFromObject(v)
	return s, 0, err
}

func sampleFromObject(v *strictjson.Value) (*Sample, error) {
	o := obj{v: v}
	vf, hasVendor := v.Fields["vendor"]
	amd := hasVendor && vf.Kind == strictjson.String && vf.Str == VendorAMD
	// AMD GPUs have no persistence mode or pstate: null for them, a
	// string for every other GPU.
	mode := func(key string) string {
		f := o.get(key)
		switch {
		case f == nil:
			return ""
		case amd && f.Kind != strictjson.Null:
			o.fail(key, `want null for vendor "amd" (AMD GPUs have none), found %s`, f.Describe())
			return ""
		case amd:
			return ""
		}
		return o.str(key)
	}
	s := &Sample{
		T:                     o.str("t"),
		BootID:                o.str("boot_id"),
		GPUIndex:              o.intMin("gpu_index", 0),
		GPUUUID:               o.str("gpu_uuid"),
		GPUName:               o.str("gpu_name"),
		DriverVersion:         o.str("driver_version"),
		SMClockMHz:            o.intMin("sm_clock_mhz", 1),
		ClocksMaxSMMHz:        o.intMin("clocks_max_sm_mhz", 1),
		ThrottleReasonsActive: o.str("throttle_reasons_active"),
		PersistenceMode:       mode("persistence_mode"),
		PState:                mode("pstate"),
		UtilizationGPUPct:     o.intMin("utilization_gpu_pct", 0),
	}
	s.ClocksApplicationsGraphicsMHz = o.intOrNull("clocks_applications_graphics_mhz", 1)
	if o.err == nil && s.UtilizationGPUPct > 100 {
		o.fail("utilization_gpu_pct", "want 0 to 100, found %d", s.UtilizationGPUPct)
	}
	if o.err == nil {
		if _, err := time.Parse(time.RFC3339Nano, s.T); err != nil {
			o.fail("t", "want an RFC 3339 time, found %q", s.T)
		}
	}
	if o.err == nil {
		if _, err := ParseThrottle(s.ThrottleReasonsActive); err != nil {
			o.fail("throttle_reasons_active", "%v", err)
		}
	}
	s.TemperatureGPUC = o.optFloat("temperature_gpu_c")
	s.PowerDrawW = o.optFloat("power_draw_w")
	s.ClocksMemMHz = o.optInt("clocks_mem_mhz")
	if f, ok := v.Fields["throttle_field"]; ok {
		if f.Kind != strictjson.String {
			o.fail("throttle_field", "want a string, found %s", f.Describe())
		} else {
			s.ThrottleField = f.Str
		}
	}
	if hasVendor && !amd && o.err == nil {
		if vf.Kind != strictjson.String {
			o.fail("vendor", "want a string, found %s", vf.Describe())
		} else {
			o.fail("vendor", `want "amd" (NVIDIA samples have no vendor key), found %s`, vf.Describe())
		}
	}
	amdString := func(key string, required bool) string {
		f, ok := v.Fields[key]
		switch {
		case !ok && amd && required:
			o.fail(key, `missing: every AMD GPU's sample (vendor "amd") has it`)
		case !ok:
		case f.Kind != strictjson.String:
			o.fail(key, "want a string, found %s", f.Describe())
		case !amd:
			o.fail(key, `only an AMD GPU's sample (vendor "amd") has it`)
		case f.Str == "":
			o.fail(key, "empty string")
		default:
			return f.Str
		}
		return ""
	}
	s.Vendor = map[bool]string{true: VendorAMD}[amd]
	s.PerfLevel = amdString("perf_level", true)
	s.MemoryPartition = amdString("memory_partition", false)
	switch f, ok := v.Fields["xcd_clocks_mhz"]; {
	case !ok && amd:
		o.fail("xcd_clocks_mhz", `missing: every AMD GPU's sample (vendor "amd") has it`)
	case !ok:
	case f.Kind != strictjson.Array:
		o.fail("xcd_clocks_mhz", "want an array of integers, found %s", f.Describe())
	case !amd:
		o.fail("xcd_clocks_mhz", `only an AMD GPU's sample (vendor "amd") has it`)
	case len(f.Elems) == 0:
		o.fail("xcd_clocks_mhz", "empty array: want the GFX clock of every XCD")
	default:
		clocks := []int{}
		for i, e := range f.Elems {
			n, isInt := e.Int()
			switch {
			case e.Kind != strictjson.Number:
				o.fail("xcd_clocks_mhz", "element %d: want a positive integer, found %s", i, e.Describe())
			case !isInt:
				o.fail("xcd_clocks_mhz", "element %d: want a positive integer, found %s", i, e.Describe())
			case n < 1 || n > maxSampleInt:
				o.fail("xcd_clocks_mhz", "element %d: want a positive integer, found %d", i, n)
			}
			if o.err != nil {
				break
			}
			clocks = append(clocks, int(n))
		}
		if o.err == nil {
			if lowest := slices.Min(clocks); lowest != s.SMClockMHz {
				o.fail("xcd_clocks_mhz", "lowest XCD clock %d MHz, but sm_clock_mhz is %d: it must be the lowest of them", lowest, s.SMClockMHz)
			}
		}
		s.XCDClocksMHz = clocks
	}
	for _, k := range []string{"enforced_power_limit_w", "module_enforced_power_limit_w"} {
		w := o.optFloat(k)
		if w != nil && !(*w > 0) {
			o.fail(k, "want a positive number of W, found %s", v.Fields[k].Describe())
			w = nil
		}
		if k == "enforced_power_limit_w" {
			s.EnforcedPowerLimitW = w
		} else {
			s.ModuleEnforcedPowerLimitW = w
		}
	}
	if s.ModuleEnforcedPowerLimitW != nil && s.EnforcedPowerLimitW == nil {
		o.fail("module_enforced_power_limit_w", "%s", moduleWithoutLimit)
	}
	if f, ok := v.Fields["event_counters_us"]; ok && f.Kind != strictjson.Null {
		s.EventCountersUS = oracleCounters(&o, f)
	}
	if f, ok := v.Fields["vbios_version"]; ok && f.Kind != strictjson.Null {
		switch {
		case f.Kind != strictjson.String:
			o.fail("vbios_version", "want a string, found %s", f.Describe())
		case f.Str == "":
			o.fail("vbios_version", "empty string")
		default:
			s.VbiosVersion = &f.Str
		}
	}
	if f, ok := v.Fields["energy_mj"]; ok && f.Kind != strictjson.Null {
		n, isInt := f.Int()
		switch {
		case !isInt:
			o.fail("energy_mj", "want an integer, found %s", f.Describe())
		case n < 0 || n > maxEnergyMJ:
			o.fail("energy_mj", "want an integer of mJ from 0 to %d, found %d", int64(maxEnergyMJ), n)
		default:
			s.EnergyMJ = &n
		}
	}
	if f, ok := v.Fields["energy_scope"]; ok && f.Kind != strictjson.Null {
		switch {
		case f.Kind != strictjson.String:
			o.fail("energy_scope", "want a string, found %s", f.Describe())
		case f.Str != EnergyScopeGPU && f.Str != EnergyScopeModule:
			o.fail("energy_scope", "want %q or %q, found %s", EnergyScopeGPU, EnergyScopeModule, f.Describe())
		default:
			s.EnergyScope = &f.Str
		}
	}
	for i, k := range PCIeFields {
		f, ok := v.Fields[k]
		if !ok || f.Kind == strictjson.Null {
			continue
		}
		n, isInt := f.Int()
		switch {
		case !isInt:
			o.fail(k, "want an integer, found %s", f.Describe())
		case n < 1 || n > maxPCIe:
			o.fail(k, "want a positive integer up to %d, found %d", maxPCIe, n)
		default:
			v := int(n)
			*[NumPCIe]**int{&s.PCIeGen, &s.PCIeWidth, &s.PCIeGenMax, &s.PCIeWidthMax}[i] = &v
		}
	}
	if o.err != nil {
		return nil, o.err
	}
	return s, nil
}

// oracleCounters reads event_counters_us as the contract states it.
func oracleCounters(o *obj, f *strictjson.Value) *Counters {
	const key = "event_counters_us"
	if f.Kind != strictjson.Object {
		o.fail(key, "want an object of counters, found %s", f.Describe())
		return nil
	}
	var c Counters
	for _, k := range f.Keys {
		i := counterIndex(k)
		if i < 0 {
			o.fail(key, "%q is not a counter (want %s)", k, strings.Join(CounterNames[:], ", "))
			return nil
		}
		e := f.Fields[k]
		n, ok := e.Int()
		if e.Kind != strictjson.Number || !ok {
			o.fail(key, "%s: want an integer of µs, found %s", k, e.Describe())
			return nil
		}
		if n < 0 || n > maxCounterUS {
			o.fail(key, "%s: want an integer of µs from 0 to 2^53, found %d", k, n)
			return nil
		}
		c.Set(i, n)
	}
	for _, n := range CounterNames {
		if _, ok := f.Fields[n]; !ok {
			o.fail(key, "%s: missing", n)
			return nil
		}
	}
	return &c
}

// oracleStream reads a stream as the oracle: lines split at '\n', a line
// over MaxLineBytes refused, a final line without a newline torn unless it
// reads whole.
func oracleStream(stream []byte) ([]*Sample, error) {
	var out []*Sample
	for n := 1; len(stream) > 0; n++ {
		line, rest, found := bytes.Cut(stream, []byte("\n"))
		if len(line) > MaxLineBytes {
			return out, &LineError{Line: n, Err: fmt.Errorf("longer than %d bytes; refused unread", MaxLineBytes)}
		}
		s, col, err := oracleSample(line)
		if err != nil {
			if !found {
				err = fmt.Errorf("torn final line (no newline): %w", err)
			}
			return out, &LineError{Line: n, Col: col, Err: err}
		}
		out = append(out, s)
		stream = rest
	}
	return out, nil
}

// readerStream reads a stream with Reader.
func readerStream(stream []byte) ([]*Sample, error) {
	var out []*Sample
	r := NewReader(bytes.NewReader(stream), "")
	for r.Scan() {
		out = append(out, r.Sample())
	}
	return out, r.Err()
}

// sameStream holds Reader to the oracle on one stream.
func sameStream(t *testing.T, stream []byte) {
	t.Helper()
	got, gerr := readerStream(stream)
	want, werr := oracleStream(stream)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("errors differ:\nreader %v\noracle %v\nstream:\n%q", gerr, werr, clip(stream))
	}
	if !reflect.DeepEqual(got, want) {
		for i := range min(len(got), len(want)) {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("line %d differs:\nreader %+v\noracle %+v", i+1, got[i], want[i])
			}
		}
		t.Fatalf("reader read %d samples, oracle %d", len(got), len(want))
	}
}

// foldState is what a fold says, without its scratch space.
func foldState(f *Fold) string {
	out := fmt.Sprintf("%d %s %s gap %d %d %s %s", f.Total, f.FirstT, f.LastT, f.MaxGapNS, f.GapLine, f.GapFrom, f.GapTo)
	for _, g := range f.GPUs {
		first := ""
		if g.First != nil {
			first = string(g.First.AppendJSON(nil))
		}
		power, _ := medianOf(powerMap(g.Power))
		out += fmt.Sprintf("\nGPU %d: %d %d %v %v %v %s %v persist %d %d %q drift %v %v", g.Index, g.Total, g.Idle, g.Hist,
			g.SumMHz, power, first, g.Throttle, g.persistBad, g.persistFirst, g.persistFirstVal, g.drift, g.driftOrder)
		if m := g.Managed; m != nil {
			out += fmt.Sprintf(" managed %v %s %v %v %v %d %v %v", m.LimitW, wattsOrAbsent(m.ModuleLimitW), m.FreeHist, m.FreeSum, m.PMHist, m.PMPowerN, m.PMMaxPowerW, m.Temp)
		}
		if e := g.Events; e != nil {
			out += fmt.Sprintf(" events %v %v %v %v %s %d %d %d %d %d", e.AccruedUS, e.FirstLine, e.PrevLine, e.LastLine, e.Backwards, e.BackLine, e.BackPrev, e.BackFrom, e.BackTo, e.Missing)
			out += fmt.Sprintf(" late %d", e.Late)
		}
		out += fmt.Sprintf(" pcie %+v", g.pcie)
	}
	return out
}

// sameFold holds FoldStream to the oracle's samples folded one by one.
func sameFold(t *testing.T, stream []byte) {
	t.Helper()
	sameStream(t, stream)
	got, gerr := FoldStream(bytes.NewReader(stream))
	samples, werr := oracleStream(stream)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("errors differ:\nreader %v\noracle %v", gerr, werr)
	}
	if gerr != nil {
		return // a refused stream's fold is never used
	}
	want := NewFoldFrom(samples)
	if g, w := foldState(got), foldState(want); g != w {
		t.Fatalf("folds differ:\nreader %s\noracle %s\nstream:\n%q", g, w, clip(stream))
	}
}

func TestOracleSeesTheSameKeys(t *testing.T) {
	// The reader's key table and the oracle's field list name the same keys.
	var keys []string
	for _, k := range keyNames {
		keys = append(keys, k)
	}
	amd := gb10(0, boot13, 2470, 97)
	amdify(amd)
	line := string(gb10(0, boot13, 2470, 97).AppendJSON(nil)) + string(amd.AppendJSON(nil))
	for _, k := range keys {
		if keyOf([]byte(k)) < 0 {
			t.Errorf("key %s not found", k)
		}
		if !strings.Contains(line, `"`+k+`"`) && k != "temperature_gpu_c" && k != "power_draw_w" && k != "clocks_mem_mhz" && k != "throttle_field" &&
			k != "enforced_power_limit_w" && k != "module_enforced_power_limit_w" && k != "event_counters_us" && k != "vbios_version" &&
			k != "energy_mj" && k != "energy_scope" && !slices.Contains(PCIeFields[:], k) {
			t.Errorf("key %s is not one the sampler writes", k)
		}
	}
}

// clip shortens a stream for a failure message.
func clip(b []byte) []byte {
	if len(b) > 2000 {
		return append(append(bytes.Clone(b[:1000]), "…"...), b[len(b)-1000:]...)
	}
	return b
}

func powerMap(p []PowerCount) map[int64]int {
	m := map[int64]int{}
	for _, c := range p {
		m[c.MW] += c.N
	}
	return m
}
