package clocks

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/strictjson"
)

// Expect is a leg's declared state (SPEC §12.2: --expect KEY=VALUE on
// record and sample, the plan's expect): what its owner says the box ran
// at, recorded in the record's expect block and proven against the
// stream. nil fields were not declared.
type Expect struct {
	// SMClockMHz is a locked SM clock, in MHz: the free busy median must
	// lie within MaxExpectClockBasisPoints of it.
	SMClockMHz *int `json:"sm_clock_mhz,omitempty"`
	// PowerLimitW is the enforced power limit, in W: the stream's
	// enforced_power_limit_w must equal it.
	PowerLimitW *float64 `json:"power_limit_w,omitempty"`
	// CPUGovernor is every CPU's cpufreq governor; recorded, and judged
	// where the record carries the host's governors.
	CPUGovernor *string `json:"cpu_governor,omitempty"`
}

// ExpectKeys are the keys --expect takes, in the order messages list them.
var ExpectKeys = []string{"sm_clock_mhz", "power_limit_w", "cpu_governor"}

// maxExpectMHz and maxExpectW bound a declared clock and power limit: no
// GPU clocks past 10 GHz, and no board draws 100 kW.
const (
	maxExpectMHz = 10000
	maxExpectW   = 100000
)

// Set declares key as value (the text after "KEY="); the error names the
// key and what a value must be.
func (e *Expect) Set(key, value string) error {
	switch key {
	case "sm_clock_mhz":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > maxExpectMHz {
			return fmt.Errorf("sm_clock_mhz=%s: want the locked SM clock in MHz, an integer 1 to %d (sm_clock_mhz=1830)", value, maxExpectMHz)
		}
		e.SMClockMHz = &n
	case "power_limit_w":
		w, err := strconv.ParseFloat(value, 64)
		if err != nil || !(w > 0) || w > maxExpectW || math.IsInf(w, 0) {
			return fmt.Errorf("power_limit_w=%s: want the enforced power limit in W, a number above 0 up to %d (power_limit_w=700)", value, maxExpectW)
		}
		e.PowerLimitW = &w
	case "cpu_governor":
		if value == "" || strings.ContainsFunc(value, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') }) {
			return fmt.Errorf("cpu_governor=%s: want a cpufreq governor's name, as scaling_governor prints it (cpu_governor=performance)", value)
		}
		e.CPUGovernor = &value
	default:
		return fmt.Errorf("%s: not a key --expect knows; want one of %s", key, strings.Join(ExpectKeys, ", "))
	}
	return nil
}

// ParseExpect reads --expect's KEY=VALUE declarations; nil for none. A key
// declared twice is refused: one leg has one declared state.
func ParseExpect(decls []string) (*Expect, error) {
	if len(decls) == 0 {
		return nil, nil
	}
	e := &Expect{}
	seen := map[string]bool{}
	for _, d := range decls {
		key, value, ok := strings.Cut(d, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want KEY=VALUE, one of %s (sm_clock_mhz=1830)", d, strings.Join(ExpectKeys, ", "))
		}
		if seen[key] {
			return nil, fmt.Errorf("%s declared twice: one leg has one declared state", key)
		}
		seen[key] = true
		if err := e.Set(key, value); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Decls are the declarations as --expect takes them, in ExpectKeys' order.
func (e *Expect) Decls() []string {
	var out []string
	if e.SMClockMHz != nil {
		out = append(out, fmt.Sprintf("sm_clock_mhz=%d", *e.SMClockMHz))
	}
	if e.PowerLimitW != nil {
		out = append(out, "power_limit_w="+strconv.FormatFloat(*e.PowerLimitW, 'f', -1, 64))
	}
	if e.CPUGovernor != nil {
		out = append(out, "cpu_governor="+*e.CPUGovernor)
	}
	return out
}

// parseExpectBlock reads a record's expect block, where present: an object
// of the known keys, each valid as --expect takes it.
func parseExpectBlock(v *strictjson.Value) (*Expect, error) {
	f, ok := v.Fields["expect"]
	if !ok {
		return nil, nil
	}
	if f.Kind != strictjson.Object {
		return nil, fmt.Errorf("expect: want an object, found %s", f.Describe())
	}
	keys := make([]string, 0, len(f.Fields))
	for k := range f.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	e := &Expect{}
	for _, k := range keys {
		x := f.Fields[k]
		var text string
		switch {
		case !slices.Contains(ExpectKeys, k):
			return nil, fmt.Errorf("expect.%s: not a key --expect knows; want one of %s", k, strings.Join(ExpectKeys, ", "))
		case k == "cpu_governor" && x.Kind != strictjson.String:
			return nil, fmt.Errorf("expect.%s: want a string, found %s", k, x.Describe())
		case k == "cpu_governor":
			text = x.Str
		case x.Kind != strictjson.Number:
			return nil, fmt.Errorf("expect.%s: want a number, found %s", k, x.Describe())
		default:
			text = strconv.FormatFloat(x.Num, 'f', -1, 64)
		}
		if err := e.Set(k, text); err != nil {
			return nil, fmt.Errorf("expect.%v", err)
		}
	}
	if e.SMClockMHz == nil && e.PowerLimitW == nil && e.CPUGovernor == nil {
		return nil, fmt.Errorf("expect: an empty object: write the block only where something was declared")
	}
	return e, nil
}

// checkExpect is clock.expectation: each declaration of the record that
// its stream does not bear out, per GPU, naming declared and measured.
// cpu_governor is judged against the host block's cpufreq governors (SPEC
// §12.2: every CPU's governor).
func (l *Leg) checkExpect() {
	e := l.Record.Expect
	if e == nil {
		return
	}
	if e.CPUGovernor != nil {
		if msg := expectGovernor(l.Record.Host, *e.CPUGovernor); msg != "" {
			l.add(CodeExpectation, "%s", msg)
		}
	}
	for _, g := range l.Fold.GPUs {
		if e.SMClockMHz != nil {
			if msg := expectClock(g, *e.SMClockMHz); msg != "" {
				l.add(CodeExpectation, "GPU %d: %s", g.Index, msg)
			}
		}
		if e.PowerLimitW != nil {
			want := *e.PowerLimitW
			switch m := g.Managed; {
			case m == nil:
				l.add(CodeExpectation, "GPU %d: declared power_limit_w=%s, but the stream records no enforced_power_limit_w, so nothing bears it out: record with a backend that reads the limit (NVML, or nvidia-smi's enforced.power.limit), or drop the declaration",
					g.Index, wattsOrAbsent(&want))
			case m.LimitW != want:
				l.add(CodeExpectation, "GPU %d: declared power_limit_w=%s, measured enforced limit %s: the box ran at another power limit than declared; set the limit you meant (nvidia-smi -pl, as the box's owner) or declare the one it runs, and re-measure",
					g.Index, wattsOrAbsent(&want), wattsOrAbsent(&m.LimitW))
			}
		}
	}
}

// expectGovernor says how a leg's host fails a declared cpu_governor, or
// "" when every online CPU ran it (the host block's governor set is
// exactly that one). A leg without a host stream, or a host that exposes
// no cpufreq, bears nothing out: never a pass by absence.
func expectGovernor(h *Host, want string) string {
	switch g := h.Governors(); {
	case h == nil:
		return fmt.Sprintf("declared cpu_governor=%s, but the leg has no host stream, so nothing bears it out: record the leg with a clockgate that writes PREFIX.host.jsonl, or drop the declaration", want)
	case g == nil:
		return fmt.Sprintf("declared cpu_governor=%s, but the host exposes no cpufreq (no scaling_governor under /sys/devices/system/cpu, as in most VMs), so nothing bears it out: drop the declaration, or record on a box that exposes cpufreq", want)
	case len(g) != 1 || g[0] != want:
		return fmt.Sprintf("declared cpu_governor=%s, measured governors %s: not every CPU ran the declared governor; set it on every CPU (cpupower frequency-set -g %s, as the box's owner) or declare what the box runs, and re-measure",
			want, strings.Join(g, ", "), want)
	}
	return ""
}

// expectClock says how a GPU's window fails a declared locked clock of
// want MHz, or "" when its free busy median lies within
// MaxExpectClockBasisPoints of it. Without free busy samples (every busy
// sample held at the power cap) the busy median is the measure, and the
// message says the cap held the clock.
func expectClock(g *GPUFold, want int) string {
	all := summarize(g.Hist)
	if all.n == 0 {
		return fmt.Sprintf("declared sm_clock_mhz=%d, but the window has no busy sample, so nothing bears it out: sample the leg while it runs", want)
	}
	h, what := all, "busy median"
	pm := g.PowerManaged()
	if free := summarize(g.Managed.freeHist()); g.Managed != nil && free.n > 0 {
		h, what = free, "free busy median"
	}
	if expectWithin(h.median2, want) {
		return ""
	}
	dir := "below"
	if h.median2 > 2*int64(want) {
		dir = "above"
	}
	msg := fmt.Sprintf("declared sm_clock_mhz=%d (a locked clock), measured %s %s MHz: %.2f%% %s it, more than %.1f%%",
		want, what, fmtMedian(h.median2), math.Abs(float64(h.median2)/2-float64(want))*100/float64(want), dir, float64(MaxExpectClockBasisPoints)/100)
	if pm > 0 && dir == "below" {
		msg += fmt.Sprintf("; %d of %d busy samples were held at the power cap (SwPowerCap at %s): the cap cannot hold the declared lock, so lower the lock to one the cap holds, raise the limit, or declare what the box runs, and re-measure",
			pm, all.n, g.Managed.limits())
	} else {
		msg += "; the clock was not locked where declared: lock it (nvidia-smi -lgc, as the box's owner) or declare the clock it runs, and re-measure"
	}
	return msg
}

// expectWithin reports whether a doubled median lies within
// MaxExpectClockBasisPoints of want MHz, exactly: |m/2 − want| × 10000 ≤
// bp × want, in integers.
func expectWithin(median2 int64, want int) bool {
	d := median2 - 2*int64(want)
	if d < 0 {
		d = -d
	}
	return d*10000 <= 2*int64(want)*MaxExpectClockBasisPoints
}
