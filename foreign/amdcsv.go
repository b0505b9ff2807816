package foreign

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// amdCSV reads `amd-smi metric --csv` and `amd-smi monitor --csv` logs
// (with -w, each row a GPU at one reading). amd-smi flattens its metric
// answer into one column per leaf key (clock.gfx_0.clk becomes gfx_0_clk,
// usage.gfx_activity gfx_activity, temperature.hotspot hotspot) and prints
// values without units: each column's unit is the one amd-smi's own source
// gives the value in its JSON form (testdata/foreign-real/SOURCE.md quotes
// it). A column whose unit is not established here is refused.
type amdCSV struct{}

// What an amd-smi column is, beyond the roles the other formats share.
const (
	amdPlain = iota // a field.role read by field.set
	amdEpoch        // timestamp: Unix seconds, as amd-smi stamps a watch reading
	amdXCD          // gfx_N_clk: one XCD's current GFX clock, MHz
	amdAcc          // a violation accumulator: a count that only grows
	amdPct          // monitor's violation percentages: above 0 sets the bit
	amdPerf         // perf_level
)

// amdCol is one column of an amd-smi CSV.
type amdCol struct {
	f    *field
	kind int
	xcd  int
	bit  uint64
}

// amdCols are the columns clockgate reads, with the role and unit amd-smi
// gives each (metric and monitor name them differently).
var amdCols = map[string]struct {
	role, kind int
	unit       string
	bit        uint64
}{
	"timestamp":           {roleTime, amdEpoch, "s", 0},
	"gpu":                 {roleIndex, amdPlain, "", 0},
	"gfx_activity":        {roleUtil, amdPlain, "%", 0},
	"gfx":                 {roleUtil, amdPlain, "%", 0}, // monitor
	"socket_power":        {rolePower, amdPlain, "W", 0},
	"power_usage":         {rolePower, amdPlain, "W", 0}, // monitor
	"hotspot":             {roleTemp, amdPlain, "°C", 0},
	"hotspot_temperature": {roleTemp, amdPlain, "°C", 0}, // monitor
	"gfx_clock":           {roleSM, amdPlain, "MHz", 0},  // monitor: one GFX clock
	"gfx_0_max_clk":       {roleMaxSM, amdPlain, "MHz", 0},
	"perf_level":          {rolePState, amdPerf, "", 0},
	// The VRAM used (metric --mem-usage; monitor -v), in MB, which amd-smi
	// counts in MiB (as sampler/amdjson.go reads mem_usage.used_vram).
	"used_vram": {roleMemUsed, amdPlain, "MB", 0},
	"vram_used": {roleMemUsed, amdPlain, "MB", 0}, // monitor
	// Violation accumulators (metric --throttle, ROCm 7 --violation):
	// the bits the sampler derives from them (sampler/amdjson.go).
	"ppt_accumulated":            {roleReason, amdAcc, "", 0x4},
	"socket_thermal_accumulated": {roleReason, amdAcc, "", 0x40},
	"vr_thermal_accumulated":     {roleReason, amdAcc, "", 0x40},
	"hbm_thermal_accumulated":    {roleReason, amdAcc, "", 0x40},
	"prochot_accumulated":        {roleReason, amdAcc, "", 0x8},
	// monitor --violation: the percentage of the last interval in
	// violation. Above 0 is a throttle; 0 proves nothing of the time
	// between readings, so these cover no bit.
	"pviol":      {roleReason, amdPct, "%", 0x4},
	"tviol":      {roleReason, amdPct, "%", 0x40},
	"phot_tviol": {roleReason, amdPct, "%", 0x8},
	"vr_tviol":   {roleReason, amdPct, "%", 0x40},
	"hbm_tviol":  {roleReason, amdPct, "%", 0x40},
}

// amdIgnored are columns amd-smi prints beside those read: known, not
// needed, not read.
var amdIgnored = map[string]bool{
	"umc_activity": true, "mm_activity": true, "vcn_activity": true, "jpeg_activity": true, "gfx_busy_inst": true,
	"jpeg_busy": true, "vcn_busy": true, "gfx_busy_acc": true, "gfx_voltage": true, "soc_voltage": true,
	"mem_voltage": true, "throttle_status": true, "power_management": true, "edge": true, "mem": true,
	"accumulation_counter": true, "total_vram": true, "free_vram": true,
	"total_visible_vram": true, "used_visible_vram": true, "free_visible_vram": true, "total_gtt": true,
	"used_gtt": true, "free_gtt": true, "memory_temperature": true, "mem_clock": true, "encoder": true,
	"encoder_clock": true, "decoder": true, "decoder_clock": true, "vram_total": true,
}

var (
	amdClockCol  = regexp.MustCompile(`^(gfx|mem|vclk|dclk|fclk|socclk)_([0-9]{1,3})_(clk|min_clk|max_clk|clk_locked|deep_sleep)$`)
	amdXCPCol    = regexp.MustCompile(`^(gfx_busy_inst|jpeg_busy|vcn_busy|gfx_busy_acc)_xcp_[0-9]{1,3}$`)
	amdViolation = regexp.MustCompile(`^(prochot|ppt|socket_thermal|vr_thermal|hbm_thermal)_violation_(status|activity)$`)
)

// amdMaxMHz bounds a GFX clock amd-smi may print (as the sampler's).
const amdMaxMHz = 100000

// amdNotSupported is what amd-smi prints for a violation counter the GPU
// does not support: the largest 64-bit value, never a count.
const amdNotSupported = math.MaxUint64

// amdPerfPrefix is how amd-smi spells a performance level's enum.
const amdPerfPrefix = "AMDSMI_DEV_PERF_LEVEL_"

func amdColumn(name string, col int, path string, line int) (*amdCol, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if k, ok := amdCols[key]; ok {
		return &amdCol{f: &field{role: k.role, name: name, col: col}, kind: k.kind, bit: k.bit}, nil
	}
	if m := amdClockCol.FindStringSubmatch(key); m != nil {
		if m[1] == "gfx" && m[3] == "clk" {
			n, _ := strconv.Atoi(m[2])
			return &amdCol{f: &field{role: roleSM, name: name, col: col}, kind: amdXCD, xcd: n}, nil
		}
		return &amdCol{f: &field{role: roleIgnored, name: name, col: col}}, nil
	}
	if amdIgnored[key] || amdViolation.MatchString(key) || amdXCPCol.MatchString(key) {
		return &amdCol{f: &field{role: roleIgnored, name: name, col: col}}, nil
	}
	return nil, refuse(path, line, col, "unknown column %q: not an amd-smi metric or monitor column whose unit clockgate knows (log amd-smi metric --usage --power --clock --temperature --throttle --perf-level --csv -w 1)", name)
}

// amdHeader: a header's first cell is an amd-smi key; a data row's is a
// number.
func amdHeader(cells []cell) bool {
	k := strings.ToLower(cells[0].v)
	return k == "timestamp" || k == "gpu"
}

// amdGPU is what a GPU's rows must keep: its XCDs and its accumulators.
type amdGPU struct {
	xcds      []int
	firstPath string
	firstLine int
	acc       map[string]uint64 // by column name
}

func (amdCSV) Parse(in Input, o *Options, c *Collector) error {
	var cols []*amdCol
	var header []cell
	headerLine := 0
	// A GPU's XCDs and accumulators carry across the files of one leg:
	// an accumulator that advanced between two files is a throttle.
	if c.amdGPUs == nil {
		c.amdGPUs = map[string]*amdGPU{}
	}
	gpus := c.amdGPUs
	ticks := map[string]int{}
	rows := 0
	ls := lines(in.Data)
	last := lastLine(ls)
	for i, text := range ls {
		ln := i + 1
		if strings.TrimSpace(text) == "" {
			c.drop(in.Path, ln, "blank")
			continue
		}
		cells := splitCSV(text)
		if amdHeader(cells) {
			if header != nil {
				if !sameCells(cells, header) {
					return refuse(in.Path, ln, firstDiff(cells, header), "the header changes mid-file (first at line %d)", headerLine)
				}
				c.drop(in.Path, ln, "repeated header")
				continue
			}
			header, headerLine = cells, ln
			var err error
			if cols, err = amdSetup(cells, in.Path, ln, o, c); err != nil {
				return err
			}
			continue
		}
		if cols == nil {
			return refuse(in.Path, ln, 0, "no header: amd-smi --csv prints one first (timestamp or gpu, …)")
		}
		if why, err := torn(in.Path, ln, i == last, text, len(cells), len(cols)); err != nil {
			return err
		} else if why != "" {
			c.drop(in.Path, ln, why)
			continue
		}
		r := &reading{path: in.Path, line: ln, src: fmt.Sprintf("%s:%d", in.Path, ln), amd: true}
		type xcdClock struct{ xcd, mhz, col int }
		var xs []xcdClock
		type accVal struct {
			col int
			v   uint64
			a   *amdCol
		}
		var accs []accVal
		for k, a := range cols {
			v, col := cells[k].v, cells[k].col
			switch a.kind {
			case amdEpoch:
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n <= 0 {
					return refuse(in.Path, ln, col, "%s: want Unix seconds (amd-smi -w stamps each reading so), found %q", a.f.name, v)
				}
				r.t, r.hasT, r.timeCol = time.Unix(n, 0).UTC(), true, col
			case amdXCD:
				if notAvailable[v] {
					if a.xcd == 0 {
						return refuse(in.Path, ln, col, "%s: %q where a value is required", a.f.name, v)
					}
					continue // not an XCD of this GPU
				}
				n, ok := parseWhole(v)
				if !ok || n == 0 || n > amdMaxMHz {
					return refuse(in.Path, ln, col, "%s: want a whole number of MHz from 1 to %d, found %q", a.f.name, amdMaxMHz, v)
				}
				xs = append(xs, xcdClock{a.xcd, n, col})
			case amdAcc:
				if notAvailable[v] {
					return refuse(in.Path, ln, col, "%s: %q where a value is required (the GPU gives no violation accumulators: log without --throttle)", a.f.name, v)
				}
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return refuse(in.Path, ln, col, "%s: want a counter (a whole number ≥ 0), found %q", a.f.name, v)
				}
				if n == amdNotSupported {
					return refuse(in.Path, ln, col, "%s: %d, the largest 64-bit value, which amd-smi prints for a counter the GPU does not support", a.f.name, n)
				}
				accs = append(accs, accVal{col, n, a})
			case amdPct:
				if notAvailable[v] {
					continue
				}
				x, ok := parseNumber(v)
				if !ok || x < 0 || x > 100 {
					return refuse(in.Path, ln, col, "%s: want a percentage from 0 to 100, found %q", a.f.name, v)
				}
				if x > 0 {
					r.reasons |= a.bit
				}
			case amdPerf:
				if notAvailable[v] {
					continue
				}
				r.perfLevel = strings.TrimPrefix(v, amdPerfPrefix)
				if r.perfLevel == "" {
					return refuse(in.Path, ln, col, "%s: %q names no level", a.f.name, v)
				}
			default:
				if err := a.f.set(r, v, in.Path, ln, col, o); err != nil {
					return err
				}
			}
		}
		if !r.hasIndex {
			// amd-smi always prints gpu; a file without it is not its CSV.
			return refuse(in.Path, ln, 0, "no gpu column: amd-smi --csv prints the GPU's index")
		}
		k := r.gpuKey()
		g := gpus[k]
		if len(xs) > 0 {
			var ids []int
			r.sm = xs[0].mhz
			for _, x := range xs {
				ids = append(ids, x.xcd)
				r.xcds = append(r.xcds, x.mhz)
				r.sm = min(r.sm, x.mhz) // the pace of a kernel spread over the XCDs
			}
			if g != nil && !sameInts(ids, g.xcds) {
				return refuse(in.Path, ln, xs[0].col, "GPU %d: GFX clocks of XCDs %s, where %s:%d gave XCDs %s: the XCDs read changed mid-leg",
					r.index, joinInts(ids), g.firstPath, g.firstLine, joinInts(g.xcds))
			}
			if g == nil {
				g = &amdGPU{xcds: ids, firstPath: in.Path, firstLine: ln, acc: map[string]uint64{}}
				gpus[k] = g
			}
		} else {
			if r.sm > 0 {
				r.xcds = []int{r.sm}
			}
			if g == nil {
				g = &amdGPU{firstPath: in.Path, firstLine: ln, acc: map[string]uint64{}}
				gpus[k] = g
			}
		}
		for _, a := range accs {
			prev, seen := g.acc[strings.ToLower(a.a.f.name)]
			switch {
			case seen && a.v < prev:
				return refuse(in.Path, ln, a.col, "%s: GPU %d: went back from %d to %d: the driver was reloaded or the GPU reset within the window, so the leg's clock state is not one state",
					a.a.f.name, r.index, prev, a.v)
			case seen && a.v > prev:
				r.reasons |= a.a.bit
			}
			g.acc[strings.ToLower(a.a.f.name)] = a.v
		}
		c.take(in.Path, ln, r, o, ticks)
		rows++
	}
	if cols == nil || rows == 0 {
		return refuse(in.Path, 0, 0, "no data rows")
	}
	return nil
}

// amdSetup checks a header: columns known, each role read once, the
// required ones present; it records the column map and what per-reason
// columns cover.
func amdSetup(cells []cell, path string, line int, o *Options, c *Collector) ([]*amdCol, error) {
	var cols []*amdCol
	seen := map[int]*amdCol{}
	xcds := map[int]bool{}
	for _, h := range cells {
		a, err := amdColumn(h.v, h.col, path, line)
		if err != nil {
			return nil, err
		}
		cols = append(cols, a)
		switch {
		case a.kind == amdXCD:
			xcds[a.xcd] = true
			if g := seen[roleSM]; g != nil && g.kind != amdXCD {
				return nil, refuse(path, line, h.col, "column %q reads the GFX clock again (column %q already does)", a.f.name, g.f.name)
			}
			if seen[roleSM] == nil {
				seen[roleSM] = a
			}
			continue
		case a.f.role == roleIgnored || a.f.role == roleReason:
			continue
		}
		if g, twice := seen[a.f.role]; twice {
			return nil, refuse(path, line, h.col, "column %q reads %s again (column %q already does)", a.f.name, roleKeys[a.f.role], g.f.name)
		}
		seen[a.f.role] = a
	}
	switch {
	case seen[roleSM] == nil:
		return nil, refuse(path, line, 0, "no GFX clock column: log amd-smi metric --clock (gfx_0_clk, …) or monitor --gfx (gfx_clock)")
	case seen[roleSM].kind == amdXCD && !xcds[0]:
		return nil, refuse(path, line, seen[roleSM].f.col, "GFX clock columns without gfx_0_clk: every GPU has XCD 0")
	case seen[roleIndex] == nil:
		return nil, refuse(path, line, 0, "no gpu column: amd-smi --csv prints the GPU's index")
	case seen[roleTime] == nil && o.Interval == 0:
		return nil, refuse(path, line, 0, "no timestamp column (amd-smi prints one only with -w): log with -w, or pass --start and --interval")
	case seen[roleUtil] == nil && o.BusyAboveMHz == 0:
		return nil, refuse(path, line, 0, "no utilization column: log amd-smi metric --usage (gfx_activity), or pass --busy-above-mhz N to count a sample busy when its GFX clock is above N")
	}
	for _, a := range cols {
		key := roleKeys[a.f.role]
		switch a.kind {
		case amdXCD:
			key = "sm_clock_mhz (lowest over XCDs), xcd_clocks_mhz"
		case amdAcc:
			key = "throttle_reasons_active (accumulator advancing)"
			c.covered |= a.bit
		case amdPct:
			key = "throttle_reasons_active (above 0)"
		case amdPerf:
			key = "perf_level"
		}
		c.column(a.f.name, key)
	}
	if seen[roleTime] == nil {
		c.coverage = fmt.Sprintf("no time column: times are --start %s plus --interval %v per sample, not the source's", o.Start.UTC().Format(time.RFC3339), o.Interval)
	}
	return cols, nil
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}
