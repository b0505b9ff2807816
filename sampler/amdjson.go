package sampler

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/strictjson"
)

// amd-smi prints JSON in two shapes: ROCm 6.x a bare list of GPU objects,
// ROCm 7.x the same list as {"gpu_data": [...]}. A value with a unit is
// {"value": V, "unit": "U"}, and one the driver cannot give is the string
// "N/A". Every value clockgate needs is read from exactly one place, with
// the unit it must have; "N/A", a missing key, a bare number where a value
// with a unit belongs, or another unit is a refusal naming the field, never
// a number. sampler/testdata/amd-smi-real holds the real outputs these
// shapes are read from.

// amdGPUs returns the GPU objects of an amd-smi --json answer, in either
// shape.
func amdGPUs(out []byte) ([]*strictjson.Value, error) {
	v, err := strictjson.Parse(out)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	list := v
	if v.Kind == strictjson.Object {
		d, ok := v.Fields["gpu_data"]
		if !ok || len(v.Keys) != 1 {
			return nil, fmt.Errorf(`want a list of GPUs, or {"gpu_data": [...]} (ROCm 7), found an object with keys %s`, strings.Join(v.Keys, ", "))
		}
		list = d
	}
	if list.Kind != strictjson.Array {
		return nil, fmt.Errorf(`want a list of GPUs, or {"gpu_data": [...]} (ROCm 7), found %s`, list.Describe())
	}
	for i, e := range list.Elems {
		if e.Kind != strictjson.Object {
			return nil, fmt.Errorf("entry %d: want a GPU object, found %s", i, e.Describe())
		}
	}
	return list.Elems, nil
}

// amdField is one place in a GPU object, "clock.gfx_0.clk", for messages.
type amdField string

// errAMDNA marks a needed value amd-smi printed as "N/A".
var errAMDNA = errors.New(`"N/A"`)

// amdFieldError is a needed value that cannot be read, naming its place.
type amdFieldError struct {
	field amdField
	err   error
}

func (e *amdFieldError) Error() string {
	if errors.Is(e.err, errAMDNA) {
		return fmt.Sprintf(`%s: "N/A", where every sample needs a number`, e.field)
	}
	return fmt.Sprintf("%s: %v", e.field, e.err)
}

func (e *amdFieldError) Unwrap() error { return e.err }

// lookup walks path (dot-separated keys) from g; a key that is missing, or
// a step that is not an object, is an error naming the place.
func lookup(g *strictjson.Value, path string) (*strictjson.Value, error) {
	v := g
	keys := strings.Split(path, ".")
	for i, k := range keys {
		here := amdField(strings.Join(keys[:i+1], "."))
		if v.Kind == strictjson.String && v.Str == "N/A" {
			return nil, &amdFieldError{amdField(strings.Join(keys[:i], ".")), errAMDNA}
		}
		if v.Kind != strictjson.Object {
			return nil, &amdFieldError{amdField(strings.Join(keys[:i], ".")), fmt.Errorf("want an object, found %s", v.Describe())}
		}
		next, ok := v.Fields[k]
		if !ok {
			return nil, &amdFieldError{here, errors.New("missing")}
		}
		v = next
	}
	return v, nil
}

// amdQuantity reads the {"value", "unit"} at path, whose unit must be one
// of units.
func amdQuantity(g *strictjson.Value, path string, units ...string) (float64, error) {
	v, err := lookup(g, path)
	if err != nil {
		return 0, err
	}
	f := amdField(path)
	switch {
	case v.Kind == strictjson.String && v.Str == "N/A":
		return 0, &amdFieldError{f, errAMDNA}
	case v.Kind != strictjson.Object:
		return 0, &amdFieldError{f, fmt.Errorf(`want {"value": …, "unit": %q}, found %s`, units[0], v.Describe())}
	}
	val, ok := v.Fields["value"]
	if !ok {
		return 0, &amdFieldError{f + ".value", errors.New("missing")}
	}
	if val.Kind == strictjson.String && val.Str == "N/A" {
		return 0, &amdFieldError{f + ".value", errAMDNA}
	}
	if val.Kind != strictjson.Number || math.IsInf(val.Num, 0) || math.IsNaN(val.Num) {
		return 0, &amdFieldError{f + ".value", fmt.Errorf("want a number, found %s", val.Describe())}
	}
	u, ok := v.Fields["unit"]
	if !ok {
		return 0, &amdFieldError{f + ".unit", errors.New("missing")}
	}
	for _, want := range units {
		if u.Kind == strictjson.String && u.Str == want {
			return val.Num, nil
		}
	}
	return 0, &amdFieldError{f + ".unit", fmt.Errorf("want %q, found %s", units[0], u.Describe())}
}

// amdEnergyMJ reads energy.total_energy_consumption, the GPU's energy
// counter in J since the driver loaded, as whole mJ (×1000, rounded).
func amdEnergyMJ(g *strictjson.Value) (int64, error) {
	const path = "energy.total_energy_consumption"
	j, err := amdQuantity(g, path, "J")
	if err != nil {
		return 0, err
	}
	mj := math.Round(j * 1000)
	if !(mj >= 0) || mj > 1<<53 {
		return 0, &amdFieldError{path + ".value", fmt.Errorf("want a number of J from 0 to 2^53 mJ, found %v", j)}
	}
	return int64(mj), nil
}

// amdInt reads the quantity at path as a whole number in lo..hi.
func amdInt(g *strictjson.Value, path string, lo, hi int, units ...string) (int, error) {
	x, err := amdQuantity(g, path, units...)
	if err != nil {
		return 0, err
	}
	if x != math.Trunc(x) || x < float64(lo) || x > float64(hi) {
		return 0, &amdFieldError{amdField(path) + ".value", fmt.Errorf("want a whole number from %d to %d, found %v", lo, hi, x)}
	}
	return int(x), nil
}

// amdCounter reads an accumulator at path: a whole number ≥ 0, bare (as
// amd-smi prints the accumulated counters) or as {"value": N}.
func amdCounter(g *strictjson.Value, path string) (uint64, error) {
	v, err := lookup(g, path)
	if err != nil {
		return 0, err
	}
	f := amdField(path)
	if v.Kind == strictjson.Object {
		val, ok := v.Fields["value"]
		if !ok {
			return 0, &amdFieldError{f + ".value", errors.New("missing")}
		}
		v, f = val, f+".value"
	}
	switch {
	case v.Kind == strictjson.String && v.Str == "N/A":
		return 0, &amdFieldError{f, errAMDNA}
	case v.Kind != strictjson.Number:
		return 0, &amdFieldError{f, fmt.Errorf("want a counter (a whole number ≥ 0), found %s", v.Describe())}
	}
	n, err := strconv.ParseUint(v.Raw, 10, 64)
	if err != nil {
		return 0, &amdFieldError{f, fmt.Errorf("want a counter (a whole number ≥ 0 within 64 bits), found %s", v.Describe())}
	}
	if n == math.MaxUint64 {
		// What amd-smi prints for a violation field the GPU does not
		// support (ROCm's gpu_violations.md): never a count.
		return 0, &amdFieldError{f, fmt.Errorf("%d, the largest 64-bit value, which amd-smi prints for a counter the GPU does not support", n)}
	}
	return n, nil
}

// amdString reads the string at path; "N/A" and "" are refused.
func amdString(g *strictjson.Value, path string) (string, error) {
	v, err := lookup(g, path)
	if err != nil {
		return "", err
	}
	switch {
	case v.Kind == strictjson.String && v.Str == "N/A":
		return "", &amdFieldError{amdField(path), errAMDNA}
	case v.Kind != strictjson.String:
		return "", &amdFieldError{amdField(path), fmt.Errorf("want a string, found %s", v.Describe())}
	case strings.TrimSpace(v.Str) == "":
		return "", &amdFieldError{amdField(path), errors.New("empty string")}
	}
	return v.Str, nil
}

// amdIndex reads a GPU object's "gpu", its index as amd-smi numbers it.
func amdIndex(g *strictjson.Value) (int, error) {
	v, ok := g.Fields["gpu"]
	if !ok {
		return 0, &amdFieldError{"gpu", errors.New("missing")}
	}
	n, isInt := v.Int()
	if v.Kind != strictjson.Number || !isInt || n < 0 || n > maxGPUIndex {
		return 0, &amdFieldError{"gpu", fmt.Errorf("want a GPU index, found %s", v.Describe())}
	}
	return int(n), nil
}

// The violation causes amd-smi accumulates (MI300 and later), each with the
// bit clockgate derives when its accumulator advances between two
// readings: package power tracking (PVIOL) is power management at the
// socket power cap, SwPowerCap's bit; the thermal ones (TVIOL: socket, VR,
// HBM) HwThermal's; PROCHOT HwSlowdown's.
var amdCauses = [...]struct {
	key  string
	bit  uint64
	name string
}{
	{"ppt_accumulated", 0x4, "power (PPT, PVIOL)"},
	{"socket_thermal_accumulated", 0x40, "socket thermal (TVIOL)"},
	{"vr_thermal_accumulated", 0x40, "voltage-regulator thermal"},
	{"hbm_thermal_accumulated", 0x40, "HBM thermal"},
	{"prochot_accumulated", 0x8, "PROCHOT"},
}

// The amd-smi metric flags that print the violation accumulators: ROCm 7's
// --violation, and ROCm 6.x's --throttle, whose object they are read from.
const (
	amdViolationFlag = "--violation"
	amdThrottleFlag  = "--throttle"
)

// amdMaxMHz bounds a clock amd-smi may print: a GFX clock past 100 GHz is a
// defect of the answer.
const amdMaxMHz = 100000

// amdMetric is one GPU's part of an amd-smi metric answer.
type amdMetric struct {
	index int
	// activityPct is usage.gfx_activity in percent.
	activityPct int
	// powerW is power.socket_power; hotspotC temperature.hotspot.
	powerW, hotspotC float64
	// maxMHz is clock.gfx_0.max_clk.
	maxMHz int
	// xcds are the XCDs read (N of clock.gfx_N), in increasing order, and
	// clocks their clock.gfx_N.clk in MHz.
	xcds, clocks []int
	// perfLevel is perf_level without its AMDSMI_DEV_PERF_LEVEL_ prefix.
	perfLevel string
	// acc are amdCauses' accumulators.
	acc [len(amdCauses)]uint64
	// usedMiB is mem_usage.used_vram (amd-smi's MB are MiB: it divides
	// bytes by 1024²), and usedErr why it could not be read: the field is
	// optional, kept when the probe reads it on every GPU.
	usedMiB float64
	usedErr error
	// energyMJ is energy.total_energy_consumption in mJ, where asked for.
	energyMJ *int64
	// pcie is the link's current generation and width (pcie block), and
	// pcieErr why it could not be read.
	pcie    [2]int
	pcieErr error
}

// lowest is the lowest XCD clock: the pace of a kernel spread over them.
func (m *amdMetric) lowest() int {
	low := m.clocks[0]
	for _, c := range m.clocks[1:] {
		low = min(low, c)
	}
	return low
}

// perfLevelPrefix is how amd-smi spells a performance level's enum.
const perfLevelPrefix = "AMDSMI_DEV_PERF_LEVEL_"

// amdMemUsed is the metric --mem-usage answer's VRAM used.
const amdMemUsed = "mem_usage.used_vram"

// parseAMDMetric reads one GPU object of an amd-smi metric answer. xcds
// are the XCDs the GPU has (from the probe): each must give a clock, and
// no other may. With xcds nil (the probe), the XCDs are those of gfx_0,
// gfx_1, … whose clock is a number; gfx_0 must be one. obj is the key of
// the violation accumulators' object: "violation" or "throttle".
func parseAMDMetric(g *strictjson.Value, xcds []int, obj string) (*amdMetric, error) {
	m := &amdMetric{}
	var err error
	if m.index, err = amdIndex(g); err != nil {
		return nil, err
	}
	if m.activityPct, err = amdInt(g, "usage.gfx_activity", 0, 100, "%"); err != nil {
		return nil, err
	}
	if m.powerW, err = amdQuantity(g, "power.socket_power", "W"); err != nil {
		return nil, err
	}
	if m.powerW < 0 {
		return nil, &amdFieldError{"power.socket_power.value", fmt.Errorf("negative: %v W", m.powerW)}
	}
	m.pcie[0], m.pcie[1], m.pcieErr = amdPCIeLink(g, amdPCIeSpeed, amdPCIeWidth)
	m.usedMiB, m.usedErr = amdQuantity(g, amdMemUsed, "MB")
	if m.usedErr == nil && m.usedMiB < 0 {
		m.usedErr = &amdFieldError{amdMemUsed + ".value", fmt.Errorf("negative: %v MB", m.usedMiB)}
	}
	clock, err := lookup(g, "clock")
	if err != nil {
		return nil, err
	}
	if clock.Kind != strictjson.Object {
		return nil, &amdFieldError{"clock", fmt.Errorf("want an object, found %s", clock.Describe())}
	}
	if m.maxMHz, err = amdInt(g, "clock.gfx_0.max_clk", 1, amdMaxMHz, "MHz"); err != nil {
		return nil, err
	}
	present := gfxKeys(clock)
	want := map[int]bool{}
	for _, x := range xcds {
		want[x] = true
	}
	for _, x := range present {
		path := fmt.Sprintf("clock.gfx_%d.clk", x)
		mhz, err := amdInt(g, path, 1, amdMaxMHz, "MHz")
		switch {
		case err == nil && xcds != nil && !want[x]:
			return nil, &amdFieldError{amdField(path), fmt.Errorf("a clock (%d MHz) for an XCD that gave none at the start (the XCDs read are gfx %s)", mhz, joinInts(xcds))}
		case err == nil:
			m.xcds, m.clocks = append(m.xcds, x), append(m.clocks, mhz)
		case xcds == nil && x > 0 && errors.Is(err, errAMDNA):
			// Not an XCD of this GPU: amd-smi prints every gfx_N it has
			// room for, N/A where the GPU has fewer.
		case xcds == nil && x > 0:
			return nil, err
		case want[x] || x == 0:
			return nil, err
		}
		delete(want, x)
	}
	if len(want) > 0 {
		var gone []int
		for x := range want {
			gone = append(gone, x)
		}
		sort.Ints(gone)
		return nil, &amdFieldError{amdField(fmt.Sprintf("clock.gfx_%d", gone[0])), errors.New("missing: an XCD read at the start is not in the answer")}
	}
	if len(m.clocks) == 0 {
		return nil, &amdFieldError{"clock.gfx_0", errors.New("missing")}
	}
	if m.hotspotC, err = amdQuantity(g, "temperature.hotspot", "C", "°C"); err != nil {
		return nil, err
	}
	level, err := amdString(g, "perf_level")
	if err != nil {
		return nil, err
	}
	m.perfLevel = strings.TrimPrefix(level, perfLevelPrefix)
	if m.perfLevel == "" {
		return nil, &amdFieldError{"perf_level", fmt.Errorf("%q names no level", level)}
	}
	// The accumulators' object is named for the flag that printed it; a
	// full metric answer (as ROCm 7 prints without flags) names it
	// "throttle" whatever the flag.
	if _, ok := g.Fields[obj]; !ok {
		for _, other := range []string{"violation", "throttle"} {
			if _, ok := g.Fields[other]; ok {
				obj = other
			}
		}
	}
	for i, c := range amdCauses {
		if m.acc[i], err = amdCounter(g, obj+"."+c.key); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// gfxKeys returns the N of the clock object's gfx_N keys, in increasing
// order.
func gfxKeys(clock *strictjson.Value) []int {
	var xs []int
	for _, k := range clock.Keys {
		if rest, ok := strings.CutPrefix(k, "gfx_"); ok && isDigits(rest) && len(rest) <= 3 {
			n, _ := strconv.Atoi(rest)
			xs = append(xs, n)
		}
	}
	sort.Ints(xs)
	return xs
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

// amdStatic is what amd-smi static gives of one GPU, read once at start.
type amdStatic struct {
	index int
	// name is asic.market_name; driver driver.version.
	name, driver string
	// capW is the socket power cap in W: limit.socket_power (ROCm 6.x) or
	// limit.ppt0.socket_power_limit (ROCm 7).
	capW float64
	// compute and memory are the partition modes (SPX, CPX, …; NPS1, NPS4),
	// "" where the GPU has none (amd-smi prints N/A). compute is read from
	// partition.accelerator_partition (amd-smi 25 and 26, ROCm 6.4 and
	// 7.x) or partition.compute_partition (older).
	compute, memory string
	// pcieMax is the link's maximum generation and width (bus block), and
	// pcieErr why it could not be read: optional, kept where every GPU
	// read gives it.
	pcieMax [2]int
	pcieErr error
}

// The keys of the static compute partition mode: amd-smi 25 and 26 (ROCm
// 6.4, 7.x) print accelerator_partition, older ones compute_partition.
const (
	amdAcceleratorPartition = "partition.accelerator_partition"
	amdComputePartition     = "partition.compute_partition"
)

// computePartitionKey is the key g's static answer holds its compute
// partition mode under: accelerator_partition where the answer has it,
// else compute_partition (whose absence is then the defect named).
func computePartitionKey(g *strictjson.Value) string {
	if p, err := lookup(g, "partition"); err == nil && p.Kind == strictjson.Object {
		if _, ok := p.Fields["accelerator_partition"]; ok {
			return amdAcceleratorPartition
		}
	}
	return amdComputePartition
}

// parseAMDStatic reads one GPU object of an amd-smi static answer.
func parseAMDStatic(g *strictjson.Value) (*amdStatic, error) {
	s := &amdStatic{}
	var err error
	if s.index, err = amdIndex(g); err != nil {
		return nil, err
	}
	if s.name, err = amdString(g, "asic.market_name"); err != nil {
		return nil, err
	}
	if s.driver, err = amdString(g, "driver.version"); err != nil {
		return nil, err
	}
	capPath := "limit.socket_power"
	if l, err := lookup(g, "limit"); err == nil && l.Kind == strictjson.Object {
		if _, ok := l.Fields["ppt0"]; ok {
			capPath = "limit.ppt0.socket_power_limit"
		}
	}
	if s.capW, err = amdQuantity(g, capPath, "W"); err != nil {
		return nil, err
	}
	if !(s.capW > 0) {
		return nil, &amdFieldError{amdField(capPath) + ".value", fmt.Errorf("%v W is not a power cap", s.capW)}
	}
	s.pcieMax[0], s.pcieMax[1], s.pcieErr = amdPCIeLink(g, amdPCIeSpeedMax, amdPCIeWidthMax)
	for _, p := range []struct {
		key string
		dst *string
	}{{computePartitionKey(g), &s.compute}, {"partition.memory_partition", &s.memory}} {
		v, err := amdString(g, p.key)
		switch {
		case errors.Is(err, errAMDNA):
			// A GPU without partition modes.
		case err != nil:
			return nil, err
		default:
			*p.dst = v
		}
	}
	return s, nil
}

// amdListed reads an amd-smi list answer: each GPU's index and UUID.
func amdListed(out []byte) ([]GPU, error) {
	gs, err := amdGPUs(out)
	if err != nil {
		return nil, err
	}
	var gpus []GPU
	for i, g := range gs {
		idx, err := amdIndex(g)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %v", i, err)
		}
		uuid, err := amdString(g, "uuid")
		if err != nil {
			return nil, fmt.Errorf("GPU %d: %v", idx, err)
		}
		gpus = append(gpus, GPU{Index: idx, UUID: uuid})
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].Index < gpus[j].Index })
	for i := 1; i < len(gpus); i++ {
		if gpus[i].Index == gpus[i-1].Index {
			return nil, fmt.Errorf("GPU %d listed twice", gpus[i].Index)
		}
	}
	return gpus, nil
}
