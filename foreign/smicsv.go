package foreign

import (
	"fmt"
	"strings"
	"time"
)

// smiCSV reads `nvidia-smi --query-gpu=… --format=csv[,noheader][,nounits]
// -l N` (or -lms) logs: any field list, with or without header and units.
type smiCSV struct{}

// smiReasonBits are the per-reason columns (clocks_event_reasons.<x>, or
// the older clocks_throttle_reasons.<x>) and the bit each reports, as
// nvml.h defines them (testdata/smi-real/FIELDS.md).
var smiReasonBits = map[string]uint64{
	"gpu_idle": 0x1, "applications_clocks_setting": 0x2, "sw_power_cap": 0x4, "hw_slowdown": 0x8,
	"sync_boost": 0x10, "sw_thermal_slowdown": 0x20, "hw_thermal_slowdown": 0x40,
	"hw_power_brake_slowdown": 0x80, "display_clock_setting": 0x100,
}

// smiField maps a header cell (a field name, and its unit in brackets
// when printed) to its column.
func smiField(h string, col int, path string, line int) (*field, error) {
	name, unit := h, ""
	if i := strings.LastIndex(h, " ["); i >= 0 && strings.HasSuffix(h, "]") {
		name, unit = h[:i], h[i+2:len(h)-1]
	}
	canon := strings.TrimSpace(name)
	if _, exact := smiFieldUnits[canon]; !exact {
		canon = strings.ToLower(canon)
	}
	if s, ok := strings.CutPrefix(canon, "clocks_throttle_reasons."); ok {
		canon = "clocks_event_reasons." + s
	}
	if a, ok := smiAliases[canon]; ok {
		canon = a
	}
	want, ok := smiFieldUnits[canon]
	if !ok {
		return nil, refuse(path, line, col, "unknown column %q: not a --query-gpu field clockgate knows", name)
	}
	if unit != "" && unit != want {
		return nil, refuse(path, line, col, "column %q in [%s]: nvidia-smi prints it in [%s]: contradicting units", name, unit, want)
	}
	f := &field{name: name, col: col, unit: want}
	switch canon {
	case "timestamp":
		f.role = roleTime
	case "index":
		f.role = roleIndex
	case "uuid":
		f.role = roleUUID
	case "name":
		f.role = roleName
	case "driver_version":
		f.role = roleDriver
	case "persistence_mode":
		f.role = rolePersist
	case "pstate":
		f.role = rolePState
	case "vbios_version":
		f.role = roleVbios
	case "clocks.current.sm":
		f.role = roleSM
	case "clocks.max.sm":
		f.role = roleMaxSM
	case "clocks.applications.graphics":
		f.role = roleApps
	case "clocks.current.memory":
		f.role = roleMem
	case "memory.used":
		f.role = roleMemUsed
	case "clocks_event_reasons.active":
		f.role = roleMask
	case "utilization.gpu":
		f.role = roleUtil
	case "temperature.gpu":
		f.role = roleTemp
	case "power.draw":
		f.role, f.rank = rolePower, 0
	case "power.draw.average":
		f.role, f.rank = rolePower, 1
	case "power.draw.instant":
		f.role, f.rank = rolePower, 2
	case "enforced.power.limit":
		f.role = roleLimit
	case "module.enforced.power.limit":
		f.role = roleModule
	default:
		if s, ok := strings.CutPrefix(canon, "clocks_event_reasons."); ok {
			if bit, ok := smiReasonBits[s]; ok {
				f.role, f.bit = roleReason, bit
			}
		}
		if s, ok := strings.CutPrefix(canon, "clocks_event_reasons_counters."); ok {
			f.role, f.key = roleCounter, s
		}
	}
	return f, nil
}

// setupFields checks a header's columns: known, each read once, the
// power column of best rank read, and the required ones present.
func setupFields(fs []*field, path string, line int, o *Options, c *Collector, what string) error {
	seen := map[int]*field{}
	best := -1
	for _, f := range fs {
		if f.role == rolePower && (best < 0 || f.rank < fs[best].rank) {
			for i := range fs {
				if fs[i] == f {
					best = i
				}
			}
		}
	}
	for i, f := range fs {
		if f.role == rolePower && i != best {
			f.role = roleIgnored
		}
		if f.role == roleIgnored || f.role == roleReason || f.role == roleCounter {
			continue
		}
		if g, twice := seen[f.role]; twice {
			return refuse(path, line, f.col, "column %q reads %s again (column %q already does)", f.name, roleKeys[f.role], g.name)
		}
		seen[f.role] = f
	}
	if seen[roleSM] == nil {
		return refuse(path, line, 0, "no SM clock column: log %s", what)
	}
	if seen[roleTime] == nil && o.Interval == 0 {
		return refuse(path, line, 0, "no time column: log the time, or pass --start and --interval")
	}
	if seen[roleUtil] == nil && o.BusyAboveMHz == 0 {
		return refuse(path, line, 0, "no utilization column: log it, or pass --busy-above-mhz N to count a sample busy when its SM clock is above N")
	}
	for _, f := range fs {
		if f.role == roleMask {
			c.masked = true
		}
		if f.role == roleReason {
			c.covered |= f.bit
		}
		if f.role == roleCounter {
			// A counter covers its reason over the whole interval between
			// readings: the judge holds every one that advances to be a
			// throttle (SPEC §10.1).
			bit, ok := counterBits[f.key]
			if !ok {
				f.role = roleIgnored
			}
			c.covered |= bit
		}
		c.column(f.name, roleKeys[f.role])
	}
	if seen[roleTime] == nil {
		c.coverage = fmt.Sprintf("no time column: times are --start %s plus --interval %v per sample, not the source's", o.Start.UTC().Format(time.RFC3339), o.Interval)
	}
	return nil
}

// counterKeys are the event counters the stream records (clocks.CounterNames).
var counterKeys = []string{"sw_power_cap", "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"}

// counterBits are the reason bit each event counter accrues.
var counterBits = map[string]uint64{"sw_power_cap": 0x4, "sync_boost": 0x10, "sw_thermal_slowdown": 0x20,
	"hw_thermal_slowdown": 0x40, "hw_power_brake_slowdown": 0x80}

func (smiCSV) Parse(in Input, o *Options, c *Collector) error {
	var fs []*field
	var header []cell
	headerLine := 0
	if len(o.Columns) > 0 {
		for i, name := range o.Columns {
			f, err := smiField(strings.TrimSpace(name), i+1, "--columns", 0)
			if err != nil {
				return err
			}
			fs = append(fs, f)
		}
		if err := setupFields(fs, "--columns", 0, o, c, "clocks.sm"); err != nil {
			return err
		}
	}
	rows := 0
	ticks := map[string]int{}
	ls := lines(in.Data)
	last := lastLine(ls)
	for i, text := range ls {
		ln := i + 1
		if strings.TrimSpace(text) == "" {
			c.drop(in.Path, ln, "blank")
			continue
		}
		cells := splitCSV(text)
		if smiHeader(cells) {
			if header == nil && fs == nil {
				header, headerLine = cells, ln
				for _, h := range cells {
					f, err := smiField(h.v, h.col, in.Path, ln)
					if err != nil {
						return err
					}
					fs = append(fs, f)
				}
				if err := setupFields(fs, in.Path, ln, o, c, "clocks.sm"); err != nil {
					return err
				}
				continue
			}
			if header == nil {
				header, headerLine = cells, ln
				if !sameNames(cells, fs) {
					return refuse(in.Path, ln, 0, "the header does not name the --columns fields")
				}
				continue
			}
			if !sameCells(cells, header) {
				return refuse(in.Path, ln, firstDiff(cells, header), "the header changes mid-file (first at line %d)", headerLine)
			}
			c.drop(in.Path, ln, "repeated header")
			continue
		}
		if fs == nil {
			return refuse(in.Path, ln, 0, "a headerless CSV (--format=csv,noheader): pass --columns with the --query-gpu field list")
		}
		if why, err := torn(in.Path, ln, i == last, text, len(cells), len(fs)); err != nil {
			return err
		} else if why != "" {
			c.drop(in.Path, ln, why)
			continue
		}
		r := &reading{path: in.Path, line: ln, src: fmt.Sprintf("%s:%d", in.Path, ln)}
		for k, f := range fs {
			if err := f.set(r, cells[k].v, in.Path, ln, cells[k].col, o); err != nil {
				return err
			}
		}
		c.take(in.Path, ln, r, o, ticks)
		rows++
	}
	if fs == nil || rows == 0 {
		return refuse(in.Path, 0, 0, "no data rows")
	}
	return nil
}

// take gives a reading without a time column its time, --start plus
// --interval per earlier reading of its GPU (ticks counts them), and keeps
// it or drops it (keep). Every data row is taken, so a file whose rows
// --gpu or --from/--to all drop is not one without data.
func (c *Collector) take(path string, line int, r *reading, o *Options, ticks map[string]int) {
	if !r.hasT {
		k := r.gpuKey()
		r.t = o.Start.Add(time.Duration(ticks[k]) * o.Interval)
		ticks[k]++
	}
	c.keep(path, line, r, o)
}

// keep adds the reading r, read at path:line, where --gpu selects its GPU
// and it falls within --from and --to, and says so; any other is dropped
// and recorded. The GPU is matched first, so that a --gpu whose readings
// all fall outside the window is not refused as naming no GPU.
func (c *Collector) keep(path string, line int, r *reading, o *Options) bool {
	if !c.selected(o, r.indexName(), r.uuid) {
		c.drop(path, line, "a GPU --gpu does not select")
		return false
	}
	if !inWindow(r.t, o) {
		c.drop(path, line, "outside --from/--to")
		return false
	}
	c.readings = append(c.readings, r)
	return true
}

// inWindow says whether t falls within --from and --to.
func inWindow(t time.Time, o *Options) bool {
	if !o.From.IsZero() && t.Before(o.From) {
		return false
	}
	if !o.To.IsZero() && t.After(o.To) {
		return false
	}
	return true
}

// smiHeader: a header's first cell is a --query-gpu field name; a data
// row's never is.
func smiHeader(cells []cell) bool {
	name := cells[0].v
	if i := strings.LastIndex(name, " ["); i >= 0 {
		name = name[:i]
	}
	name = strings.TrimSpace(name)
	if _, ok := smiFieldUnits[name]; ok {
		return true
	}
	name = strings.ToLower(name)
	if _, ok := smiAliases[name]; ok {
		return true
	}
	if strings.HasPrefix(name, "clocks_throttle_reasons.") {
		return true
	}
	_, ok := smiFieldUnits[name]
	return ok
}

func sameCells(a, b []cell) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].v != b[i].v {
			return false
		}
	}
	return true
}

func firstDiff(a, b []cell) int {
	for i := range a {
		if i >= len(b) || a[i].v != b[i].v {
			return a[i].col
		}
	}
	return 0
}

func sameNames(cells []cell, fs []*field) bool {
	if len(cells) != len(fs) {
		return false
	}
	for i := range cells {
		name := cells[i].v
		if j := strings.LastIndex(name, " ["); j >= 0 {
			name = name[:j]
		}
		if !strings.EqualFold(strings.TrimSpace(name), fs[i].name) {
			return false
		}
	}
	return true
}
