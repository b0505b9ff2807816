package foreign

import (
	"fmt"
	"strings"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// What a source column becomes.
const (
	roleIgnored = iota
	roleTime
	roleIndex
	roleUUID
	roleName
	roleDriver
	rolePersist
	rolePState
	roleVbios
	roleSM
	roleMaxSM
	roleApps
	roleMask
	roleReason
	roleCounter
	roleUtil
	roleTemp
	rolePower
	roleLimit
	roleModule
	roleMem
	roleEnergy
	// roleMemUsed is the GPU memory used, in MiB: the memory record's
	// quantity (SPEC §12.1), as the sampler reads it with each reading.
	roleMemUsed
)

// roleKeys are the stream keys each role writes, as import.json's column
// map names them.
var roleKeys = map[int]string{roleIgnored: "(not read)", roleTime: "t", roleIndex: "gpu_index", roleUUID: "gpu_uuid",
	roleName: "gpu_name", roleDriver: "driver_version", rolePersist: "persistence_mode", rolePState: "pstate",
	roleVbios: "vbios_version", roleSM: "sm_clock_mhz", roleMaxSM: "clocks_max_sm_mhz",
	roleApps: "clocks_applications_graphics_mhz", roleMask: "throttle_reasons_active", roleReason: "throttle_reasons_active",
	roleCounter: "event_counters_us", roleUtil: "utilization_gpu_pct", roleTemp: "temperature_gpu_c",
	rolePower: "power_draw_w", roleLimit: "enforced_power_limit_w", roleModule: "module_enforced_power_limit_w",
	roleMem: "clocks_mem_mhz", roleMemUsed: "memory_used_mib", roleEnergy: "boot proof (import.json boot_counters " + clocks.EnergyCounter + ")"}

// field is one column of a source.
type field struct {
	role int
	name string // as the source names it
	col  int    // 1-based position, for messages
	// unit is the unit the value is in ("" for none); scale converts it
	// to the stream's (J for energy).
	unit  string
	scale float64
	bit   uint64 // roleReason
	key   string // roleCounter
	// rank orders several power columns: the lowest present is read.
	rank int
	// form is how values print their unit: 0 not seen yet, 1 with it, 2
	// bare. A column that mixes both is refused.
	form int
}

// deprecated is what drivers from 590 print for clocks.applications.graphics.
const deprecated = "[Requested functionality has been deprecated]"

// required says whether a column's value may not be a not-available token.
func (f *field) required() bool {
	switch f.role {
	case roleIgnored, roleTemp, rolePower, roleMem, roleModule, rolePState, roleVbios, roleMemUsed:
		// Optional readings: a GPU without a module limit prints [N/A].
		return false
	}
	return true
}

// value strips a value's printed unit, checking it is the column's and
// that the column does not mix printed and bare units.
func (f *field) value(v, path string, line, col int) (string, error) {
	if f.unit == "" {
		return v, nil
	}
	form := 2
	if s, ok := strings.CutSuffix(v, " "+f.unit); ok {
		v, form = s, 1
	} else if i := strings.LastIndexByte(v, ' '); i > 0 {
		if _, num := parseNumber(v[:i]); num {
			return "", refuse(path, line, col, "%s: value %q is in %s, the column is in %s: contradicting units", f.name, v, v[i+1:], f.unit)
		}
	}
	if f.form != 0 && f.form != form {
		return "", refuse(path, line, col, "%s: value %q mixes units: earlier values were printed %s", f.name, v,
			map[int]string{1: "with " + f.unit, 2: "bare"}[f.form])
	}
	f.form = form
	return v, nil
}

// set reads value v of field f into r. tz is the zone of a time printed
// without one.
func (f *field) set(r *reading, v, path string, line, col int, o *Options) error {
	if notAvailable[v] || v == "[Not Found]" {
		if f.required() {
			return refuse(path, line, col, "%s: %q where a value is required", f.name, v)
		}
		return nil
	}
	if f.role == roleApps && v == deprecated {
		r.appsKind = 2
		return nil
	}
	if f.role == roleIgnored {
		return nil
	}
	v, err := f.value(v, path, line, col)
	if err != nil {
		return err
	}
	bad := func(want string) error {
		return refuse(path, line, col, "%s: want %s, found %q", f.name, want, v)
	}
	whole := func(want string) (int, error) {
		n, ok := parseWhole(v)
		if !ok {
			return 0, bad(want)
		}
		return n, nil
	}
	num := func(want string) (*float64, error) {
		x, ok := parseNumber(v)
		if !ok || x < 0 {
			return nil, bad(want)
		}
		if f.scale != 0 {
			x *= f.scale
		}
		return &x, nil
	}
	switch f.role {
	case roleTime:
		t, err := parseSMITime(v, o)
		if err != nil {
			return refuse(path, line, col, "%s: %v", f.name, err)
		}
		r.t, r.hasT, r.timeCol = t, true, col
	case roleIndex:
		n, err := whole("a GPU index")
		if err != nil {
			return err
		}
		r.index, r.hasIndex = n, true
	case roleUUID:
		r.uuid = v
	case roleName:
		r.name = v
	case roleDriver:
		r.driver = v
	case rolePersist:
		r.persist = v
	case rolePState:
		r.pstate = v
	case roleVbios:
		r.vbios = v
	case roleSM, roleMaxSM, roleApps:
		n, err := whole("a whole number of MHz")
		if err != nil {
			return err
		}
		if n == 0 {
			return bad("a positive number of MHz")
		}
		switch f.role {
		case roleSM:
			r.sm = n
		case roleMaxSM:
			r.maxSM = n
		default:
			r.apps, r.appsKind = n, 1
		}
	case roleMem:
		n, err := whole("a whole number of MHz")
		if err != nil {
			return err
		}
		r.memClock = &n
	case roleMask:
		bits, err := clocks.ParseThrottle(v)
		if err != nil {
			return bad("a hex bit set like 0x0000000000000000")
		}
		r.mask, r.hasMask = bits, true
	case roleReason:
		switch v {
		case "Active":
			r.reasons |= f.bit
		case "Not Active":
		default:
			return bad(`"Active" or "Not Active"`)
		}
	case roleCounter:
		n, err := whole("a whole number of µs")
		if err != nil {
			return err
		}
		if r.counters == nil {
			r.counters = map[string]int64{}
		}
		r.counters[f.key] = int64(n)
	case roleUtil:
		n, err := whole("a whole percentage")
		if err != nil {
			return err
		}
		if n > 100 {
			return bad("0 to 100 %")
		}
		r.util, r.hasUtil = n, true
	case roleTemp:
		x, err := num("a temperature in °C")
		if err != nil {
			return err
		}
		r.temp = x
	case rolePower:
		x, err := num("a power in W")
		if err != nil {
			return err
		}
		r.power = x
	case roleLimit, roleModule:
		x, err := num("a power limit in W")
		if err != nil {
			return err
		}
		if *x <= 0 {
			return bad("a positive power limit in W")
		}
		if f.role == roleLimit {
			r.limit = x
		} else {
			r.module = x
		}
	case roleMemUsed:
		x, err := num("a memory used in MiB")
		if err != nil {
			return err
		}
		r.memUsed = x
	case roleEnergy:
		x, err := num("a cumulative energy")
		if err != nil {
			return err
		}
		if r.cum == nil {
			r.cum = map[string]float64{}
		}
		r.cum[clocks.EnergyCounter] = *x
	}
	return nil
}

// smiTimeLayouts are how nvidia-smi prints its timestamp column: local
// time, no zone, with or without milliseconds.
var smiTimeLayouts = []string{"2006/01/02 15:04:05.000", "2006/01/02 15:04:05"}

func parseSMITime(v string, o *Options) (time.Time, error) {
	if o.TZ == nil {
		return time.Time{}, fmt.Errorf("%q is local time without a zone; pass --tz (UTC, an IANA zone, or an offset like -07:00)", v)
	}
	for _, l := range smiTimeLayouts {
		if t, err := time.ParseInLocation(l, v, o.TZ); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("want a time like 2026/07/18 17:57:49.469, found %q", v)
}

// cell is one value of a line and the column it starts at.
type cell struct {
	v   string
	col int
}

// splitCSV splits a line at commas, trimming the spaces nvidia-smi and
// amd-smi print after each, and keeps each value's 1-based byte column.
// Quotes are honoured (amd-smi quotes values that hold commas).
func splitCSV(s string) []cell {
	var out []cell
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		start := i
		var b strings.Builder
		quoted := i < len(s) && s[i] == '"'
		if quoted {
			i++
			for i < len(s) {
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						b.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
			for i < len(s) && s[i] != ',' {
				i++
			}
		} else {
			for i < len(s) && s[i] != ',' {
				b.WriteByte(s[i])
				i++
			}
		}
		out = append(out, cell{strings.TrimRight(b.String(), " \r"), start + 1})
		if i >= len(s) {
			return out
		}
		i++ // the comma
	}
}

// lines splits data into lines, numbered from 1, without their ends.
func lines(data []byte) []string {
	s := strings.TrimPrefix(string(data), "\ufeff")
	ls := strings.Split(s, "\n")
	if len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	for i := range ls {
		ls[i] = strings.TrimSuffix(ls[i], "\r")
	}
	return ls
}
