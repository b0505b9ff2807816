package clocks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Unproven is what an imported stream writes in a field its source does
// not record (a boot id, a persistence mode, a GPU name): never a value,
// and never alone: PREFIX.import.json lists the clock.unproven_* reason
// that stands for it.
const Unproven = "[unproven]"

// Import is PREFIX.import.json: where an imported stream came from and
// what its source cannot prove (SPEC §11.4).
type Import struct {
	// SHA256 is each input file's SHA-256, by path as given.
	SHA256 map[string]string `json:"sha256"`
	// Format is the --format the source was read as.
	Format string `json:"format"`
	// Columns maps each source column or metric read to the stream key it
	// became.
	Columns map[string]string `json:"columns"`
	// TimeZone is the zone the source's times were read in.
	TimeZone string `json:"time_zone"`
	// Given are the values flags supplied, by flag.
	Given map[string]string `json:"given"`
	// DroppedLines are the source lines not converted, each with why.
	DroppedLines []Dropped `json:"dropped_lines"`
	// Unproven are the clock.unproven_* codes the source leaves standing;
	// UnprovenWhy says of each what is missing.
	Unproven    []string          `json:"unproven"`
	UnprovenWhy map[string]string `json:"unproven_why"`
	// BootCounters are each GPU's cumulative counters at the window's first
	// and last sample, for the boot proof across legs.
	BootCounters []BootCounters `json:"boot_counters"`
}

// Dropped is a source line an import did not convert.
type Dropped struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Why  string `json:"why"`
}

// BootCounters are one GPU's cumulative counters at the first and last
// sample of an imported window.
type BootCounters struct {
	GPUIndex int    `json:"gpu_index"`
	GPUUUID  string `json:"gpu_uuid"`
	GPUName  string `json:"gpu_name"`
	FirstT   string `json:"first_t"`
	LastT    string `json:"last_t"`
	// MaxPowerW is the highest power_draw_w of the window; nil when none.
	MaxPowerW *float64 `json:"max_power_w"`
	// Counters are [first, last] by counter: energy_j (J), or a violation
	// or event time ending in _us (µs).
	Counters map[string][2]float64 `json:"counters"`
}

// EnergyCounter is the key of the energy counter in BootCounters.
const EnergyCounter = "energy_j"

// ImportPath is the import.json beside a record PREFIX.summary.json.
func ImportPath(recordPath string) string {
	return strings.TrimSuffix(recordPath, ".summary.json") + ".import.json"
}

// unprovenLeg lists the codes judged per leg (clock.unproven_boot is the
// ratio's: a boot is proven across legs).
var unprovenLeg = map[string]bool{CodeUnprovenThrottle: true, CodeUnprovenPowerLimit: true,
	CodeUnprovenCoverage: true, CodeUnprovenPersistence: true, CodeUnprovenStatic: true, CodeUnprovenBusy: true,
	CodeUnprovenBoot: true}

// ParseImport reads import.json strictly: every key known, every
// unproven code registered and explained.
func ParseImport(data []byte) (*Import, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var im Import
	if err := dec.Decode(&im); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	if im.Format == "" {
		return nil, fmt.Errorf("format: missing")
	}
	if len(im.SHA256) == 0 {
		return nil, fmt.Errorf("sha256: missing")
	}
	for _, c := range im.Unproven {
		if !unprovenLeg[c] {
			return nil, fmt.Errorf("unproven: %q is not a clock.unproven_* code", c)
		}
		if im.UnprovenWhy[c] == "" {
			return nil, fmt.Errorf("unproven_why: no reason given for %s", c)
		}
	}
	return &im, nil
}

// unproven reports whether the leg's import leaves code standing.
func (l *Leg) unproven(code string) bool {
	if l.Import == nil {
		return false
	}
	for _, c := range l.Import.Unproven {
		if c == code {
			return true
		}
	}
	return false
}

// checkImported raises, on an imported leg, each clock.unproven_* reason
// its source leaves standing, but the boot (the ratio's).
func (l *Leg) checkImported() {
	for _, c := range l.Import.Unproven {
		if c == CodeUnprovenBoot {
			continue
		}
		l.add(c, "imported from %s: %s", l.Import.Format, l.Import.UnprovenWhy[c])
	}
}

// unprovenBoot is the ratio's boot proof over imported legs (SPEC §11.4
// "Boot proof, exactly"): the trusted legs whose boot id is Unproven are
// one boot with every other trusted leg only when all are imported and,
// per GPU, each leg's counters continue into the next leg's. It returns
// the reason's message, or "" when nothing is unproven.
func unprovenBoot(arms ...*Arm) string {
	var legs []*Leg
	var names []string
	unproven := 0
	for _, a := range arms {
		for _, l := range a.Legs {
			if !l.Trusted() {
				continue
			}
			legs = append(legs, l)
			names = append(names, a.Engine+" "+l.Name)
			if l.Record.BootID == Unproven {
				unproven++
			}
		}
	}
	if unproven == 0 {
		return ""
	}
	var unnamed []string
	for i, l := range legs {
		if l.Record.BootID == Unproven {
			unnamed = append(unnamed, names[i])
		}
	}
	head := fmt.Sprintf("no boot id in imported legs %s", strings.Join(unnamed, ", "))
	if unproven < len(legs) {
		return head + "; the other legs record one, so no counter can join them"
	}
	var bl []BootLeg
	for i, l := range legs {
		if l.Import == nil {
			return head + fmt.Sprintf("; %s has no import.json", names[i])
		}
		bl = append(bl, BootLeg{Name: names[i], GPUs: l.Import.BootCounters})
	}
	if ok, why := ProveOneBoot(bl); !ok {
		return head + "; counter continuity does not prove one boot: " + why
	}
	return ""
}

// BootLeg is one leg's boot counters, named for messages.
type BootLeg struct {
	Name string
	GPUs []BootCounters
}

// ProveOneBoot holds legs to one boot by counter continuity, GPU by GPU:
// taken in time order, legs A then B of one GPU (same UUID, or same index
// and name when UUIDs are unproven) are one boot when some cumulative
// counter C has C(B's first) ≥ C(A's last) and C(A's last) exceeds what C
// could have gathered since a reset within the gap: the gap's duration
// for a time counter, the gap × the highest power either leg recorded for
// energy. It reports whether every pair is proven, and else why not.
func ProveOneBoot(legs []BootLeg) (bool, string) {
	type at struct {
		leg string
		c   *BootCounters
		t0  time.Time
	}
	byGPU := map[string][]at{}
	for _, l := range legs {
		if len(l.GPUs) == 0 {
			return false, fmt.Sprintf("%s records no counters", l.Name)
		}
		for i := range l.GPUs {
			c := &l.GPUs[i]
			key := "uuid " + c.GPUUUID
			if c.GPUUUID == Unproven || c.GPUUUID == "" {
				key = fmt.Sprintf("index %d name %s", c.GPUIndex, c.GPUName)
			}
			t0, err := time.Parse(time.RFC3339Nano, c.FirstT)
			if err != nil {
				return false, fmt.Sprintf("%s: first_t %q is not RFC 3339", l.Name, c.FirstT)
			}
			byGPU[key] = append(byGPU[key], at{l.Name, c, t0})
		}
	}
	var why []string
	for _, key := range sortedKeys(byGPU) {
		list := byGPU[key]
		if len(list) != len(legs) {
			why = append(why, fmt.Sprintf("GPU %s is in %d of %d legs", key, len(list), len(legs)))
			continue
		}
		sort.SliceStable(list, func(i, j int) bool { return list[i].t0.Before(list[j].t0) })
		for i := 1; i < len(list); i++ {
			a, b := list[i-1], list[i]
			if msg := continues(a.c, b.c); msg != "" {
				why = append(why, fmt.Sprintf("GPU %s, %s then %s: %s", key, a.leg, b.leg, msg))
			}
		}
	}
	if len(why) > 0 {
		return false, strings.Join(why, "; ")
	}
	return true, ""
}

// continues says why a's counters do not prove b on a's boot, or "" when
// one counter does.
func continues(a, b *BootCounters) string {
	aEnd, err1 := time.Parse(time.RFC3339Nano, a.LastT)
	bStart, err2 := time.Parse(time.RFC3339Nano, b.FirstT)
	if err1 != nil || err2 != nil {
		return "a window time is not RFC 3339"
	}
	gap := bStart.Sub(aEnd).Seconds()
	if gap < 0 {
		return fmt.Sprintf("the windows overlap (%s after %s)", b.FirstT, a.LastT)
	}
	power := math.NaN()
	for _, p := range []*float64{a.MaxPowerW, b.MaxPowerW} {
		if p != nil && (math.IsNaN(power) || *p > power) {
			power = *p
		}
	}
	var names []string
	for n := range a.Counters {
		if _, ok := b.Counters[n]; ok {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "no cumulative counter recorded in both"
	}
	sort.Strings(names)
	// Counters that fail alike are named together.
	var order []string
	byWhy := map[string][]string{}
	fail := func(n, why string) {
		if _, seen := byWhy[why]; !seen {
			order = append(order, why)
		}
		byWhy[why] = append(byWhy[why], n)
	}
	for _, n := range names {
		last, first := a.Counters[n][1], b.Counters[n][0]
		var bound float64
		var unit string
		switch {
		case n == EnergyCounter:
			if math.IsNaN(power) {
				fail(n, "no power recorded to bound it")
				continue
			}
			bound, unit = gap*power, fmt.Sprintf("J (gap %.3f s × %s W)", gap, fullNum(power))
		case strings.HasSuffix(n, "_us"):
			bound, unit = gap*1e6, fmt.Sprintf("µs (gap %.3f s)", gap)
		default:
			fail(n, "not a known cumulative counter")
			continue
		}
		switch {
		case first < last:
			fail(n, fmt.Sprintf("went back from %s to %s", fullNum(last), fullNum(first)))
		case !(last > bound):
			fail(n, fmt.Sprintf("%s not above the %s %s a reset could have gathered", fullNum(last), fullNum(bound), unit))
		default:
			return ""
		}
	}
	var why []string
	for _, w := range order {
		why = append(why, strings.Join(byWhy[w], ", ")+": "+w)
	}
	return strings.Join(why, "; ")
}

// num prints a counter or bound in full, never in exponent form.
func fullNum(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
