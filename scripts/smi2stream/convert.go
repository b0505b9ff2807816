package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// sampleTimeLayout is how the sampler writes a sample's time: UTC, RFC 3339
// with milliseconds.
const sampleTimeLayout = "2006-01-02T15:04:05.000Z"

// smiTimeLayout is how nvidia-smi prints its timestamp column: local time,
// no zone.
const smiTimeLayout = "2006/01/02 15:04:05.000"

// deprecatedToken is what drivers from 590 print for
// clocks.applications.graphics; the stream records it as null.
const deprecatedToken = "[Requested functionality has been deprecated]"

// Bits of the clock event (throttle) reason mask, as NVML defines them
// (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*).
const (
	bitGPUIdle             = 0x1
	bitApplicationsClocks  = 0x2
	bitSWPowerCap          = 0x4
	bitHWSlowdown          = 0x8
	bitSyncBoost           = 0x10
	bitSWThermalSlowdown   = 0x20
	bitHWThermalSlowdown   = 0x40
	bitHWPowerBrakeSlowdwn = 0x80
	bitDisplayClockSetting = 0x100
)

// reasonBits maps the per-reason column suffix nvidia-smi prints
// (clocks_event_reasons.<suffix> or clocks_throttle_reasons.<suffix>) to
// its bit.
var reasonBits = map[string]uint64{
	"gpu_idle":                    bitGPUIdle,
	"applications_clocks_setting": bitApplicationsClocks,
	"sw_power_cap":                bitSWPowerCap,
	"hw_slowdown":                 bitHWSlowdown,
	"sync_boost":                  bitSyncBoost,
	"sw_thermal_slowdown":         bitSWThermalSlowdown,
	"hw_thermal_slowdown":         bitHWThermalSlowdown,
	"hw_power_brake_slowdown":     bitHWPowerBrakeSlowdwn,
	"display_clock_setting":       bitDisplayClockSetting,
}

// counterKeys are the keys of a sample's event_counters_us object, in the
// order they are written.
var counterKeys = []string{"sw_power_cap", "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"}

// counterColumns maps the suffix of a clocks_event_reasons_counters.<suffix>
// column to its key in event_counters_us. Both spellings of the power-brake
// counter seen in public scripts are read.
var counterColumns = map[string]string{
	"sw_power_cap":            "sw_power_cap",
	"sync_boost":              "sync_boost",
	"sw_thermal_slowdown":     "sw_thermal_slowdown",
	"hw_thermal_slowdown":     "hw_thermal_slowdown",
	"hw_power_brake_slowdown": "hw_power_brake_slowdown",
	"hw_power_brake":          "hw_power_brake_slowdown",
}

// Options are the stand-ins for what a capture does not record. Every
// stand-in used is reported; a field the capture lacks and no option gives
// is an error, never a default.
type Options struct {
	// BootID is the window's boot id (captures never record one).
	BootID string
	// GPUUUID is the uuid of the GPU (one GPU), or of each GPU in ascending
	// index order, comma-separated (several GPUs), when the capture has no
	// uuid column.
	GPUUUID string
	// GPUName is the GPU name when the capture has no name column.
	GPUName string
	// Driver is the driver version when the capture has no driver_version column.
	Driver string
	// Persistence is the persistence mode when the capture has none.
	Persistence string
	// PState is the performance state when the capture has no pstate column.
	PState string
	// ClocksMaxSM is clocks.max.sm in MHz when the capture has no such column (0: not given).
	ClocksMaxSM int
	// AppsClock is clocks.applications.graphics in MHz, or "null" for a
	// driver that says it is deprecated, when the capture has no such column.
	AppsClock string
	// Throttle is the throttle bit set (hex) for every row of a capture
	// with no reason column at all.
	Throttle string
	// TZ is the zone of timestamps printed without one (nvidia-smi prints
	// local time): "UTC", an IANA name, or an offset like "+02:00".
	TZ string
	// LimitW is a known enforced power limit in W, for a capture with no
	// enforced.power.limit column (0: not given).
	LimitW float64
	// ModuleLimitW is a known module power limit in W (0: not given).
	ModuleLimitW float64
	// PowerLimitIsEnforced reads the power.limit column (the software
	// limit) as the enforced limit.
	PowerLimitIsEnforced bool
	// GPU selects one GPU index from a several-GPU capture (-1: all).
	GPU int
	// Start and Interval time rows for a capture with no timestamp column.
	Start    string
	Interval time.Duration
	// Columns lists columns to read, in a capture whose header is missing
	// (written with --format=csv,noheader): the query fields, comma-separated.
	Columns string
}

// column kinds a header name maps to.
const (
	colIgnored = iota
	colTimestamp
	colIndex
	colUUID
	colName
	colDriver
	colSM
	colMaxSM
	colApps
	colActive
	colReason
	colCounter
	colPersistence
	colPState
	colUtil
	colTemp
	colPower
	colMem
	colEnforced
	colModule
	colPowerLimit
)

type column struct {
	kind   int
	name   string // the header as printed
	field  string // the field, lower case, unit stripped
	unit   string // the unit the header names, "" when none
	reason uint64 // colReason: the bit
	key    string // colCounter: the event_counters_us key
	rank   int    // colPower: preference, lower is better
}

// classify maps a normalized field name to its column.
func classify(field string) column {
	c := column{field: field}
	switch field {
	case "timestamp":
		c.kind = colTimestamp
	case "index":
		c.kind = colIndex
	case "uuid", "gpu_uuid":
		c.kind = colUUID
	case "name", "gpu_name":
		c.kind = colName
	case "driver_version":
		c.kind = colDriver
	case "clocks.current.sm", "clocks.sm":
		c.kind = colSM
	case "clocks.max.sm", "clocks.max_sm":
		c.kind = colMaxSM
	case "clocks.applications.graphics", "clocks.applications.gr":
		c.kind = colApps
	case "clocks_event_reasons.active", "clocks_throttle_reasons.active":
		c.kind = colActive
	case "persistence_mode":
		c.kind = colPersistence
	case "pstate":
		c.kind = colPState
	case "utilization.gpu":
		c.kind = colUtil
	case "temperature.gpu":
		c.kind = colTemp
	case "power.draw":
		c.kind, c.rank = colPower, 0
	case "power.draw.average", "gpu.power.draw.average":
		c.kind, c.rank = colPower, 1
	case "power.draw.instant", "gpu.power.draw.instant":
		c.kind, c.rank = colPower, 2
	case "clocks.current.memory", "clocks.mem":
		c.kind = colMem
	case "enforced.power.limit", "gpu.power.current_limit":
		c.kind = colEnforced
	case "module.enforced.power.limit", "module.power.current_limit":
		c.kind = colModule
	case "power.limit", "gpu.power.requested_limit":
		c.kind = colPowerLimit
	default:
		for _, p := range []string{"clocks_event_reasons.", "clocks_throttle_reasons."} {
			if s, ok := strings.CutPrefix(field, p); ok {
				if bit, ok := reasonBits[s]; ok {
					c.kind, c.reason = colReason, bit
				}
			}
		}
		if s, ok := strings.CutPrefix(field, "clocks_event_reasons_counters."); ok {
			if key, ok := counterColumns[s]; ok {
				c.kind, c.key = colCounter, key
			}
		}
	}
	return c
}

// normalize splits a header cell ("clocks.current.sm [MHz]") into its field
// ("clocks.current.sm") and unit ("MHz").
func normalize(h string) (field, unit string) {
	h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
	if i := strings.LastIndex(h, " ["); i >= 0 && strings.HasSuffix(h, "]") {
		unit = h[i+2 : len(h)-1]
		h = h[:i]
	}
	return strings.ToLower(strings.TrimSpace(h)), unit
}

// Result is what a conversion did.
type Result struct {
	// Stream is the converted stream, one sample per line.
	Stream []byte
	// Rows is the number of data rows read; Skipped counts repeated
	// header lines (a capture appended to by several nvidia-smi runs).
	Rows, Skipped int
	// Filled says, one line each, which field came from which stand-in.
	Filled []string
	// Read names the capture columns used and what they became.
	Read []string
	// Ignored names the capture columns not used.
	Ignored []string
	// Notes are other things a reader of the stream should know.
	Notes []string
	// GPUs are the facts measured per GPU, in index order.
	GPUs []*Facts
}

// Facts are the measured facts of one GPU's rows.
type Facts struct {
	Index int
	Name  string
	// Rows and Busy count the GPU's samples and those with utilization > 0.
	Rows, Busy int
	// SMMin, SMMedian, SMMax and SpreadPct are over busy samples (MHz, %).
	SMMin, SMMax int
	SMMedian     float64
	SpreadPct    float64
	// ReasonsKnown says whether the capture records the SwPowerCap bit;
	// PowerCapBusy counts busy samples with it set.
	ReasonsKnown bool
	PowerCapBusy int
	// OtherBits is the union of the non-benign bits other than SwPowerCap
	// over busy samples.
	OtherBits uint64
	// MaxPowerW is the largest power_draw_w (NaN when none);
	// MedianBusyPowerW over busy samples.
	MaxPowerW, MedianBusyPowerW float64
	// LimitW is the largest enforced limit recorded (NaN when none);
	// LimitSource says where it came from.
	LimitW      float64
	LimitSource string
	// MaxSMMHz is clocks_max_sm_mhz (first sample).
	MaxSMMHz int
	// TempMin and TempMax over busy samples (NaN when not recorded).
	TempMin, TempMax float64
	// Counters says whether event counters were recorded; CountersFirst
	// and CountersLast are the first and last row's (µs).
	Counters                    bool
	CountersFirst, CountersLast map[string]int64

	busySM    []int
	busyPower []float64
}

// benignBits are the bits the clock contract does not refuse.
const benignBits = bitGPUIdle | bitApplicationsClocks | bitDisplayClockSetting

// Convert reads an nvidia-smi CSV capture from r (named path in errors)
// and converts it to a clock stream.
func Convert(r io.Reader, path string, o Options) (*Result, error) {
	res := &Result{}
	cr := csv.NewReader(bufio.NewReader(r))
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	cr.LazyQuotes = true

	var header []string
	var cols []column
	line := 0
	next := func() ([]string, error) {
		rec, err := cr.Read()
		if err != nil {
			return nil, err
		}
		line, _ = cr.FieldPos(0)
		return rec, nil
	}
	if o.Columns != "" {
		header = strings.Split(o.Columns, ",")
		res.Notes = append(res.Notes, "header: the capture has none; columns given by --columns")
	}
	conv := &converter{o: o, res: res, path: path, unavailable: map[string]int{}}
	for {
		rec, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a line of spaces (encoding/csv already skips empty ones)
		}
		if header == nil {
			header = rec
			continue
		}
		if cols == nil {
			cols, err = conv.setup(header)
			if err != nil {
				return nil, fmt.Errorf("%s: header: %w", path, err)
			}
		}
		if sameHeader(rec, header) {
			res.Skipped++
			continue
		}
		if len(rec) != len(cols) {
			return nil, fmt.Errorf("%s:%d: %d values, the header has %d columns", path, line, len(rec), len(cols))
		}
		res.Rows++
		if err := conv.row(rec, line); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if header == nil || cols == nil {
		return nil, fmt.Errorf("%s: no data rows", path)
	}
	if err := conv.finish(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

func sameHeader(rec, header []string) bool {
	if len(rec) != len(header) {
		return false
	}
	for i := range rec {
		if strings.TrimSpace(rec[i]) != strings.TrimSpace(header[i]) {
			return false
		}
	}
	return true
}

type converter struct {
	o    Options
	res  *Result
	path string
	// unavailable counts, per column name, the rows whose value was a
	// not-available token ("[N/A]", "[Not Supported]"...): an optional key is
	// left out of such a row.
	unavailable map[string]int
	cols        []column
	has         map[int]int // kind -> column position (first; colReason/colCounter excluded)

	throttleField string
	reasonsRead   []string
	countersRead  []string
	tz            *time.Location
	start         time.Time
	uuids         []string
	limitSource   string

	samples []*sampleOut
	order   []int // gpu indices in first-seen order
	lastT   map[int]time.Time
	facts   map[int]*Facts
	rowsOf  map[int]int
	nrow    int
}

type sampleOut struct {
	s        clocks.Sample
	limit    *float64
	module   *float64
	counters map[string]int64
	line     int
}

func (c *converter) setup(header []string) ([]column, error) {
	c.has = map[int]int{}
	var powerPos = -1
	for i, h := range header {
		field, unit := normalize(h)
		col := classify(field)
		col.name, col.unit = strings.TrimSpace(h), unit
		switch col.kind {
		case colIgnored:
			c.res.Ignored = append(c.res.Ignored, col.name)
		case colReason:
			c.reasonsRead = append(c.reasonsRead, strings.TrimPrefix(strings.TrimPrefix(field, "clocks_event_reasons."), "clocks_throttle_reasons."))
		case colCounter:
			c.countersRead = append(c.countersRead, col.key)
		case colPower:
			if powerPos >= 0 {
				if col.rank < c.cols[powerPos].rank {
					c.cols[powerPos].kind = colIgnored
					c.res.Ignored = append(c.res.Ignored, c.cols[powerPos].name)
					powerPos = i
					c.has[colPower] = i
				} else {
					c.res.Ignored = append(c.res.Ignored, col.name)
					col.kind = colIgnored
				}
			} else {
				powerPos = i
				c.has[colPower] = i
			}
		default:
			if _, dup := c.has[col.kind]; dup {
				return nil, fmt.Errorf("column %q repeats the field of column %d", col.name, c.has[col.kind]+1)
			}
			c.has[col.kind] = i
		}
		if col.kind == colActive {
			c.throttleField = field
		}
		c.cols = append(c.cols, col)
	}
	if _, ok := c.has[colPowerLimit]; ok && !c.o.PowerLimitIsEnforced {
		c.res.Ignored = append(c.res.Ignored, c.cols[c.has[colPowerLimit]].name+" (the software limit; --power-limit-is-enforced reads it as the enforced limit)")
		c.cols[c.has[colPowerLimit]].kind = colIgnored
		delete(c.has, colPowerLimit)
	}
	for _, col := range c.cols {
		if col.kind != colIgnored {
			c.res.Read = append(c.res.Read, col.name)
		}
	}
	o := c.o
	need := func(kind int, field, flag, value string) error {
		_, col := c.has[kind]
		switch {
		case col && value != "":
			return fmt.Errorf("%s is both a column and --%s: give one", field, flag)
		case !col && value == "":
			return fmt.Errorf("%s: no column and no --%s (the stream needs it; give the value the capture's box had, or a stand-in that says it is one)", field, flag)
		case !col:
			c.res.Filled = append(c.res.Filled, fmt.Sprintf("%s = %s (--%s; not in the capture)", field, value, flag))
		}
		return nil
	}
	if _, ok := c.has[colSM]; !ok {
		return nil, errors.New("no SM clock column (clocks.sm or clocks.current.sm): nothing to convert")
	}
	if _, ok := c.has[colUtil]; !ok {
		return nil, errors.New("no utilization.gpu column: busy and idle samples cannot be told apart")
	}
	if o.BootID == "" {
		return nil, errors.New("boot_id: a capture has no boot id; give --boot-id (a stand-in, e.g. a fresh uuid, named as one in the capture's SOURCE.md)")
	}
	c.res.Filled = append(c.res.Filled, fmt.Sprintf("boot_id = %s (--boot-id; captures do not record one)", o.BootID))
	if err := need(colName, "gpu_name", "gpu-name", o.GPUName); err != nil {
		return nil, err
	}
	if _, ok := c.has[colUUID]; ok && o.GPUUUID != "" {
		return nil, errors.New("gpu_uuid is both a column and --gpu-uuid: give one")
	}
	if _, ok := c.has[colUUID]; !ok {
		if o.GPUUUID == "" {
			return nil, errors.New("gpu_uuid: no column and no --gpu-uuid (one uuid, or one per GPU in index order, comma-separated)")
		}
		c.uuids = strings.Split(o.GPUUUID, ",")
		c.res.Filled = append(c.res.Filled, fmt.Sprintf("gpu_uuid = %s (--gpu-uuid; not in the capture)", o.GPUUUID))
	}
	if err := need(colDriver, "driver_version", "driver", o.Driver); err != nil {
		return nil, err
	}
	if err := need(colPersistence, "persistence_mode", "persistence", o.Persistence); err != nil {
		return nil, err
	}
	if err := need(colPState, "pstate", "pstate", o.PState); err != nil {
		return nil, err
	}
	maxSM := ""
	if o.ClocksMaxSM != 0 {
		maxSM = strconv.Itoa(o.ClocksMaxSM)
	}
	if err := need(colMaxSM, "clocks_max_sm_mhz", "clocks-max-sm", maxSM); err != nil {
		return nil, err
	}
	if err := need(colApps, "clocks_applications_graphics_mhz", "apps-clock", o.AppsClock); err != nil {
		return nil, err
	}
	if o.AppsClock != "" && o.AppsClock != "null" {
		if _, err := strconv.Atoi(o.AppsClock); err != nil {
			return nil, fmt.Errorf("--apps-clock %q: want an integer MHz or null", o.AppsClock)
		}
	}
	_, active := c.has[colActive]
	switch {
	case active && o.Throttle != "":
		return nil, errors.New("throttle_reasons_active is both a column and --throttle: give one")
	case active:
	case len(c.reasonsRead) > 0 && o.Throttle != "":
		return nil, errors.New("the capture has per-reason columns and --throttle is given: give one")
	case len(c.reasonsRead) > 0:
		var missing []string
		for _, name := range sortedReasons() {
			if !contains(c.reasonsRead, name) {
				missing = append(missing, name)
			}
		}
		c.res.Notes = append(c.res.Notes, fmt.Sprintf("throttle_reasons_active: composed from the per-reason columns %s; not recorded, so written as 0: %s",
			strings.Join(c.reasonsRead, ", "), strings.Join(missing, ", ")))
	case o.Throttle != "":
		if _, err := clocks.ParseThrottle(o.Throttle); err != nil {
			return nil, fmt.Errorf("--throttle: %w", err)
		}
		c.res.Filled = append(c.res.Filled, fmt.Sprintf("throttle_reasons_active = %s in every row (--throttle; the capture records no reason)", o.Throttle))
	default:
		return nil, errors.New("throttle_reasons_active: no reason column (clocks_event_reasons.active, clocks_throttle_reasons.active or per-reason columns) and no --throttle stand-in")
	}
	_, enforced := c.has[colEnforced]
	_, powerLimit := c.has[colPowerLimit]
	switch {
	case enforced && (powerLimit || o.LimitW != 0):
		return nil, errors.New("enforced.power.limit is a column; do not also give --limit-w or --power-limit-is-enforced")
	case powerLimit && o.LimitW != 0:
		return nil, errors.New("--power-limit-is-enforced and --limit-w both give the enforced limit: give one")
	case enforced:
		c.limitSource = "enforced.power.limit column"
	case powerLimit:
		c.limitSource = "power.limit column, read as enforced (--power-limit-is-enforced)"
		c.res.Filled = append(c.res.Filled, "enforced_power_limit_w = the power.limit column (--power-limit-is-enforced: the software limit, read as the enforced one)")
	case o.LimitW != 0:
		c.limitSource = fmt.Sprintf("--limit-w %g (supplied, not in the capture)", o.LimitW)
		c.res.Filled = append(c.res.Filled, fmt.Sprintf("enforced_power_limit_w = %g in every row (--limit-w; supplied, not in the capture)", o.LimitW))
	}
	_, module := c.has[colModule]
	switch {
	case module && o.ModuleLimitW != 0:
		return nil, errors.New("module.enforced.power.limit is a column and --module-limit-w is given: give one")
	case o.ModuleLimitW != 0:
		c.res.Filled = append(c.res.Filled, fmt.Sprintf("module_enforced_power_limit_w = %g in every row (--module-limit-w; supplied, not in the capture)", o.ModuleLimitW))
	}
	if len(c.countersRead) > 0 && len(c.countersRead) < len(counterKeys) {
		var missing []string
		for _, k := range counterKeys {
			if !contains(c.countersRead, k) {
				missing = append(missing, k)
			}
		}
		c.res.Notes = append(c.res.Notes, "event_counters_us: the capture records only "+strings.Join(c.countersRead, ", ")+"; without "+strings.Join(missing, ", ")+
			" no sample carries the object (a sample has all five counters or none)")
	}
	_, ts := c.has[colTimestamp]
	switch {
	case ts && (o.Start != "" || o.Interval != 0):
		return nil, errors.New("the capture has a timestamp column; --start and --interval are for captures without one")
	case !ts && (o.Start == "" || o.Interval <= 0):
		return nil, errors.New("no timestamp column: give --start (RFC 3339) and --interval (the capture's -l period) to time its rows")
	case !ts:
		t, err := time.Parse(time.RFC3339Nano, o.Start)
		if err != nil {
			return nil, fmt.Errorf("--start: %w", err)
		}
		c.start = t
		c.res.Filled = append(c.res.Filled, fmt.Sprintf("t = %s + reading × %v (--start, --interval; the capture has no timestamps)", o.Start, o.Interval))
	}
	if o.TZ != "" {
		loc, err := parseZone(o.TZ)
		if err != nil {
			return nil, fmt.Errorf("--tz: %w", err)
		}
		c.tz = loc
		c.res.Filled = append(c.res.Filled, fmt.Sprintf("t: timestamps without a zone read as %s (--tz; nvidia-smi prints local time)", o.TZ))
	}
	c.lastT = map[int]time.Time{}
	c.facts = map[int]*Facts{}
	c.rowsOf = map[int]int{}
	return c.cols, nil
}

func sortedReasons() []string {
	names := make([]string, 0, len(reasonBits))
	for n := range reasonBits {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return reasonBits[names[i]] < reasonBits[names[j]] })
	return names
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func parseZone(s string) (*time.Location, error) {
	if s == "UTC" {
		return time.UTC, nil
	}
	if len(s) == 6 && (s[0] == '+' || s[0] == '-') && s[3] == ':' {
		h, err1 := strconv.Atoi(s[1:3])
		m, err2 := strconv.Atoi(s[4:6])
		if err1 == nil && err2 == nil {
			off := h*3600 + m*60
			if s[0] == '-' {
				off = -off
			}
			return time.FixedZone(s, off), nil
		}
	}
	return time.LoadLocation(s)
}

// value returns the cell of kind, trimmed, and whether the capture has it.
func (c *converter) value(rec []string, kind int) (string, bool) {
	i, ok := c.has[kind]
	if !ok {
		return "", false
	}
	return strings.TrimSpace(rec[i]), true
}

// optional is value for a column whose key the stream may leave out: a
// not-available token is counted and read as no value.
func (c *converter) optional(rec []string, kind int) (string, bool) {
	v, ok := c.value(rec, kind)
	if ok && notAvailable(v) {
		c.unavailable[c.cols[c.has[kind]].name]++
		return "", false
	}
	return v, ok
}

// notAvailable says whether v is what nvidia-smi prints for a value it
// cannot give: "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]",
// "[Insufficient Permissions]", or an empty cell.
func notAvailable(v string) bool {
	switch strings.ToLower(v) {
	case "", "n/a", "[n/a]", "[not supported]", "not supported", "[unknown error]", "[insufficient permissions]":
		return true
	}
	return false
}

// number strips the column's unit from v ("1980 MHz") and parses it.
func number(v, field string) (float64, error) {
	s := v
	for _, u := range []string{" MHz", " MiB", " W", " %", " us", " C", "MHz", "W", "%"} {
		if strings.HasSuffix(s, u) {
			s = strings.TrimSpace(strings.TrimSuffix(s, u))
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s: %q is not a number", field, v)
	}
	if f < 0 {
		return 0, fmt.Errorf("%s: %q is negative", field, v)
	}
	return f, nil
}

func integer(v, field string) (int64, error) {
	f, err := number(v, field)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || f > 1<<40 {
		return 0, fmt.Errorf("%s: %q is not an integer", field, v)
	}
	return int64(f), nil
}

// active reads an "Active"/"Not Active" cell.
func active(v, field string) (bool, error) {
	switch strings.ToLower(strings.ReplaceAll(strings.TrimSpace(v), "_", " ")) {
	case "active":
		return true, nil
	case "not active":
		return false, nil
	}
	return false, fmt.Errorf("%s: %q is neither Active nor Not Active", field, v)
}

// bits reads a bit set printed as hex ("0x0000000000000004") or decimal.
func bits(v, field string) (uint64, string, error) {
	if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
		b, err := clocks.ParseThrottle(v)
		if err != nil {
			return 0, "", fmt.Errorf("%s: %w", field, err)
		}
		return b, v, nil
	}
	b, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%s: %q is neither a hex nor a decimal bit set", field, v)
	}
	return b, fmt.Sprintf("0x%016X", b), nil
}

func (c *converter) timestamp(v string, reading int) (time.Time, error) {
	if _, ok := c.has[colTimestamp]; !ok {
		return c.start.Add(time.Duration(reading) * c.o.Interval), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		if c.tz != nil {
			return time.Time{}, fmt.Errorf("timestamp %q carries its zone; --tz is for timestamps without one", v)
		}
		return t, nil
	}
	for _, layout := range []string{smiTimeLayout, "2006/01/02 15:04:05", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			if c.tz == nil {
				return time.Time{}, fmt.Errorf("timestamp %q has no zone (nvidia-smi prints local time): give --tz", v)
			}
			return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), c.tz), nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp: %q is not a time nvidia-smi prints (%s) nor RFC 3339", v, smiTimeLayout)
}

func (c *converter) row(rec []string, line int) error {
	o := c.o
	out := &sampleOut{line: line}
	s := &out.s
	idx := 0
	if v, ok := c.value(rec, colIndex); ok {
		n, err := integer(v, "index")
		if err != nil {
			return err
		}
		idx = int(n)
	} else if o.GPU > 0 {
		return fmt.Errorf("--gpu %d: the capture has no index column (one GPU, index 0)", o.GPU)
	}
	if o.GPU >= 0 && idx != o.GPU {
		return nil
	}
	reading := c.rowsOf[idx]
	c.rowsOf[idx]++
	s.GPUIndex = idx
	ts, _ := c.value(rec, colTimestamp)
	t, err := c.timestamp(ts, reading)
	if err != nil {
		return err
	}
	if last, ok := c.lastT[idx]; ok && !t.After(last) {
		return fmt.Errorf("timestamp %s of GPU %d is not after the previous one (%s)", t.UTC().Format(sampleTimeLayout), idx, last.UTC().Format(sampleTimeLayout))
	}
	c.lastT[idx] = t
	s.T = t.UTC().Format(sampleTimeLayout)
	s.BootID = o.BootID
	if v, ok := c.value(rec, colUUID); ok {
		s.GPUUUID = v
	} else if len(c.uuids) == 1 {
		s.GPUUUID = c.uuids[0]
	}
	s.GPUName = firstOf(c, rec, colName, o.GPUName)
	s.DriverVersion = firstOf(c, rec, colDriver, o.Driver)
	s.PersistenceMode = firstOf(c, rec, colPersistence, o.Persistence)
	s.PState = firstOf(c, rec, colPState, o.PState)
	for _, f := range []struct {
		name string
		v    string
	}{{"gpu_name", s.GPUName}, {"driver_version", s.DriverVersion}, {"persistence_mode", s.PersistenceMode}, {"pstate", s.PState}} {
		if f.v == "" || strings.HasPrefix(f.v, "[") {
			return fmt.Errorf("%s: %q is not a value", f.name, f.v)
		}
	}
	v, _ := c.value(rec, colSM)
	n, err := integer(v, "sm_clock_mhz")
	if err != nil {
		return err
	}
	s.SMClockMHz = int(n)
	if v, ok := c.value(rec, colMaxSM); ok {
		n, err := integer(v, "clocks_max_sm_mhz")
		if err != nil {
			return err
		}
		s.ClocksMaxSMMHz = int(n)
	} else {
		s.ClocksMaxSMMHz = o.ClocksMaxSM
	}
	apps, ok := c.value(rec, colApps)
	if !ok {
		apps = o.AppsClock
	} else if notAvailable(apps) {
		c.unavailable[c.cols[c.has[colApps]].name]++
		apps = "null"
	}
	if apps != "null" && apps != deprecatedToken {
		n, err := integer(apps, "clocks_applications_graphics_mhz")
		if err != nil {
			return err
		}
		a := int(n)
		s.ClocksApplicationsGraphicsMHz = &a
	}
	var mask uint64
	if v, ok := c.value(rec, colActive); ok {
		b, printed, err := bits(v, c.throttleField)
		if err != nil {
			return err
		}
		mask, s.ThrottleReasonsActive = b, printed
		s.ThrottleField = c.throttleField
	} else if len(c.reasonsRead) > 0 {
		for i, col := range c.cols {
			if col.kind != colReason {
				continue
			}
			on, err := active(rec[i], col.name)
			if err != nil {
				return err
			}
			if on {
				mask |= col.reason
			}
		}
		s.ThrottleReasonsActive = fmt.Sprintf("0x%016X", mask)
	} else {
		mask, _ = clocks.ParseThrottle(o.Throttle)
		s.ThrottleReasonsActive = o.Throttle
	}
	v, _ = c.value(rec, colUtil)
	n, err = integer(v, "utilization_gpu_pct")
	if err != nil {
		return err
	}
	if n > 100 {
		return fmt.Errorf("utilization_gpu_pct: %q is over 100", v)
	}
	s.UtilizationGPUPct = int(n)
	if v, ok := c.optional(rec, colTemp); ok {
		f, err := number(v, "temperature_gpu_c")
		if err != nil {
			return err
		}
		s.TemperatureGPUC = &f
	}
	if v, ok := c.optional(rec, colPower); ok {
		f, err := number(v, "power_draw_w")
		if err != nil {
			return err
		}
		s.PowerDrawW = &f
	}
	if v, ok := c.optional(rec, colMem); ok {
		n, err := integer(v, "clocks_mem_mhz")
		if err != nil {
			return err
		}
		m := int(n)
		s.ClocksMemMHz = &m
	}
	if v, ok := c.optional(rec, colEnforced); ok {
		f, err := number(v, "enforced_power_limit_w")
		if err != nil {
			return err
		}
		out.limit = &f
	} else if v, ok := c.optional(rec, colPowerLimit); ok {
		f, err := number(v, "enforced_power_limit_w (power.limit)")
		if err != nil {
			return err
		}
		out.limit = &f
	} else if o.LimitW != 0 {
		f := o.LimitW
		out.limit = &f
	}
	if v, ok := c.optional(rec, colModule); ok {
		f, err := number(v, "module_enforced_power_limit_w")
		if err != nil {
			return err
		}
		out.module = &f
	} else if o.ModuleLimitW != 0 {
		f := o.ModuleLimitW
		out.module = &f
	}
	if len(c.countersRead) > 0 {
		out.counters = map[string]int64{}
		for i, col := range c.cols {
			if col.kind != colCounter {
				continue
			}
			v := strings.TrimSpace(rec[i])
			if notAvailable(v) {
				c.unavailable[col.name]++
				continue
			}
			n, err := integer(v, col.name)
			if err != nil {
				return err
			}
			if _, dup := out.counters[col.key]; dup {
				return fmt.Errorf("%s: a second column for counter %s", col.name, col.key)
			}
			out.counters[col.key] = n
		}
	}
	if _, seen := c.facts[idx]; !seen {
		c.order = append(c.order, idx)
		c.facts[idx] = &Facts{Index: idx, Name: s.GPUName, MaxSMMHz: s.ClocksMaxSMMHz, ReasonsKnown: reasonKnown(c, bitSWPowerCap),
			MaxPowerW: math.NaN(), MedianBusyPowerW: math.NaN(), LimitW: math.NaN(), LimitSource: c.limitSource,
			TempMin: math.NaN(), TempMax: math.NaN(), Counters: len(c.countersRead) > 0}
	}
	c.measure(c.facts[idx], out, mask)
	c.samples = append(c.samples, out)
	return nil
}

// reasonKnown says whether the capture records bit.
func reasonKnown(c *converter, bit uint64) bool {
	if _, ok := c.has[colActive]; ok {
		return true
	}
	for _, col := range c.cols {
		if col.kind == colReason && col.reason == bit {
			return true
		}
	}
	return false
}

func firstOf(c *converter, rec []string, kind int, flag string) string {
	if v, ok := c.value(rec, kind); ok {
		return v
	}
	return flag
}

func (c *converter) measure(f *Facts, out *sampleOut, mask uint64) {
	s := &out.s
	f.Rows++
	if out.counters != nil {
		if f.CountersFirst == nil {
			f.CountersFirst = out.counters
		}
		f.CountersLast = out.counters
	}
	if s.PowerDrawW != nil && (math.IsNaN(f.MaxPowerW) || *s.PowerDrawW > f.MaxPowerW) {
		f.MaxPowerW = *s.PowerDrawW
	}
	if out.limit != nil && (math.IsNaN(f.LimitW) || *out.limit > f.LimitW) {
		f.LimitW = *out.limit
	}
	if s.UtilizationGPUPct == 0 {
		return
	}
	f.Busy++
	f.busySM = append(f.busySM, s.SMClockMHz)
	if s.PowerDrawW != nil {
		f.busyPower = append(f.busyPower, *s.PowerDrawW)
	}
	if mask&bitSWPowerCap != 0 {
		f.PowerCapBusy++
	}
	f.OtherBits |= mask &^ (benignBits | bitSWPowerCap)
	if s.TemperatureGPUC != nil {
		t := *s.TemperatureGPUC
		if math.IsNaN(f.TempMin) || t < f.TempMin {
			f.TempMin = t
		}
		if math.IsNaN(f.TempMax) || t > f.TempMax {
			f.TempMax = t
		}
	}
}

func (c *converter) finish() error {
	if len(c.samples) == 0 {
		return fmt.Errorf("no row of GPU %d", c.o.GPU)
	}
	sort.Ints(c.order)
	var na []string
	for name := range c.unavailable {
		na = append(na, name)
	}
	sort.Strings(na)
	for _, name := range na {
		what := "its key is left out of those rows"
		if k, ok := c.has[colApps]; ok && c.cols[k].name == name {
			what = "clocks_applications_graphics_mhz is null there"
		}
		c.res.Notes = append(c.res.Notes, fmt.Sprintf("%s: not available in %d of %d rows; %s", name, c.unavailable[name], len(c.samples), what))
	}
	if c.uuids != nil {
		if len(c.uuids) != len(c.order) {
			return fmt.Errorf("--gpu-uuid gives %d uuids for %d GPUs", len(c.uuids), len(c.order))
		}
		pos := map[int]int{}
		for i, idx := range c.order {
			pos[idx] = i
		}
		for _, out := range c.samples {
			out.s.GPUUUID = c.uuids[pos[out.s.GPUIndex]]
		}
	}
	var buf bytes.Buffer
	for _, out := range c.samples {
		b := appendSample(nil, out)
		if _, err := clocks.ParseSample(b); err != nil {
			return fmt.Errorf("line %d converts to a sample the stream reader refuses: %w", out.line, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	c.res.Stream = buf.Bytes()
	for _, idx := range c.order {
		f := c.facts[idx]
		if f.Busy > 0 {
			sorted := append([]int(nil), f.busySM...)
			sort.Ints(sorted)
			f.SMMin, f.SMMax = sorted[0], sorted[len(sorted)-1]
			f.SMMedian = medianInts(sorted)
			f.SpreadPct = float64(f.SMMax-f.SMMin) / f.SMMedian * 100
		}
		if len(f.busyPower) > 0 {
			p := append([]float64(nil), f.busyPower...)
			sort.Float64s(p)
			f.MedianBusyPowerW = medianFloats(p)
		}
		c.res.GPUs = append(c.res.GPUs, f)
	}
	return nil
}

func medianInts(s []int) float64 {
	n := len(s)
	if n%2 == 1 {
		return float64(s[n/2])
	}
	return float64(s[n/2-1]+s[n/2]) / 2
}

func medianFloats(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// appendSample writes a sample the way the sampler does (clocks.Sample's
// keys in its order), then the power-management keys of SPEC §10.1:
// enforced_power_limit_w, module_enforced_power_limit_w, event_counters_us.
func appendSample(b []byte, out *sampleOut) []byte {
	b = out.s.AppendJSON(b)
	b = b[:len(b)-1]
	if out.limit != nil {
		b = append(b, `,"enforced_power_limit_w":`...)
		b = strconv.AppendFloat(b, *out.limit, 'f', -1, 64)
	}
	if out.module != nil {
		b = append(b, `,"module_enforced_power_limit_w":`...)
		b = strconv.AppendFloat(b, *out.module, 'f', -1, 64)
	}
	if len(out.counters) == len(counterKeys) {
		// A sample carries all five counters or none, as the sampler
		// writes them and the stream reader requires.
		b = append(b, `,"event_counters_us":{`...)
		first := true
		for _, k := range counterKeys {
			v, ok := out.counters[k]
			if !ok {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, '"')
			b = append(b, k...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// Report writes what the conversion filled, read and measured.
func (r *Result) Report(w io.Writer) {
	fmt.Fprintf(w, "rows read: %d (skipped %d repeated header lines); samples written: %d\n", r.Rows, r.Skipped, bytes.Count(r.Stream, []byte{'\n'}))
	for _, f := range r.Filled {
		fmt.Fprintf(w, "filled: %s\n", f)
	}
	fmt.Fprintf(w, "columns read: %s\n", strings.Join(r.Read, ", "))
	if len(r.Ignored) > 0 {
		fmt.Fprintf(w, "columns ignored: %s\n", strings.Join(r.Ignored, ", "))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, f := range r.GPUs {
		fmt.Fprintf(w, "gpu %d (%s): %d rows, %d busy (utilization > 0)", f.Index, f.Name, f.Rows, f.Busy)
		if f.Busy > 0 {
			fmt.Fprintf(w, "; SM clock over busy rows min %d, median %s, max %d MHz, spread %.2f%% (clocks.max.sm %d MHz)",
				f.SMMin, trimFloat(f.SMMedian), f.SMMax, f.SpreadPct, f.MaxSMMHz)
		}
		fmt.Fprintln(w)
		if f.ReasonsKnown && f.Busy > 0 {
			fmt.Fprintf(w, "gpu %d: SwPowerCap (0x4) in %d of %d busy rows (%.1f%%); other non-benign bits over busy rows: 0x%X\n",
				f.Index, f.PowerCapBusy, f.Busy, float64(f.PowerCapBusy)/float64(f.Busy)*100, f.OtherBits)
		} else if f.Busy > 0 {
			fmt.Fprintf(w, "gpu %d: the capture does not record the SwPowerCap bit\n", f.Index)
		}
		if !math.IsNaN(f.MaxPowerW) {
			fmt.Fprintf(w, "gpu %d: power max %s W, median over busy rows %s W", f.Index, trimFloat(f.MaxPowerW), trimFloat(f.MedianBusyPowerW))
			if !math.IsNaN(f.LimitW) {
				fmt.Fprintf(w, "; enforced limit %s W (%s), max/limit %.1f%%", trimFloat(f.LimitW), f.LimitSource, f.MaxPowerW/f.LimitW*100)
			} else {
				fmt.Fprint(w, "; no power limit recorded")
			}
			fmt.Fprintln(w)
		}
		if !math.IsNaN(f.TempMin) {
			fmt.Fprintf(w, "gpu %d: temperature over busy rows %s–%s °C\n", f.Index, trimFloat(f.TempMin), trimFloat(f.TempMax))
		}
		if !f.Counters {
			fmt.Fprintf(w, "gpu %d: no event counters recorded\n", f.Index)
		} else {
			var parts []string
			for _, k := range counterKeys {
				a, okA := f.CountersFirst[k]
				b, okB := f.CountersLast[k]
				if okA && okB {
					parts = append(parts, fmt.Sprintf("%s %d (%d → %d)", k, b-a, a, b))
				}
			}
			fmt.Fprintf(w, "gpu %d: event counters, µs added from first to last row: %s\n", f.Index, strings.Join(parts, ", "))
		}
	}
}

func trimFloat(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}
