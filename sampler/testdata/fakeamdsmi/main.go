// Command fakeamdsmi stands in for amd-smi in clockgate's tests. It answers
// only the calls clockgate may make:
//
//	amd-smi list --json
//	amd-smi static --asic --driver --limit --partition --json
//	amd-smi metric -g ID [ID…] --usage --power --clock --temperature --perf-level --mem-usage --violation|--throttle [--energy] --json
//
// and exits 99 on anything else, so a test proves the sampler never asks
// amd-smi to change a GPU's state. Its answers have the layout of the real
// outputs in sampler/testdata/amd-smi-real (README.md there names their
// sources): ROCm 7 wraps each answer's list in {"gpu_data": […]} and knows
// metric --violation; ROCm 6 prints the bare list and, asked for
// --violation, fails as argparse does, knowing only --throttle. Every
// value is a number with its unit, {"value": V, "unit": "U"}, or "N/A".
//
// It reads its behaviour from fakeamdsmi.json beside its own executable
// (each test links the binary into its own directory), appends every argv
// to fakeamdsmi.log there, and counts metric calls in fakeamdsmi.state
// there. The accumulators of a metric call are the sums of the advances of
// the plan's steps up to that call's, so they are known from the call's
// number alone. Every value it prints is synthetic.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// step is one metric call's values; a GPU's entry in GPU overrides them
// for that GPU.
type step struct {
	// MHz is the lowest XCD clock; XCD k reads MHz + spread[k].
	MHz int `json:"mhz"`
	// Clocks, when set, are the XCDs' clocks themselves.
	Clocks   []int    `json:"clocks"`
	Activity *int     `json:"activity"`
	PowerW   *float64 `json:"power_w"`
	HotspotC *float64 `json:"hotspot_c"`
	// UsedMB is mem_usage.used_vram, in MB (150000 where not set).
	UsedMB *float64 `json:"used_mb"`
	MaxClk int      `json:"max_clk"`
	Perf   string   `json:"perf_level"`
	// Advance adds to accumulators (by key, ppt_accumulated, …) at this
	// call; Reset sets them to 0 first.
	Advance map[string]uint64 `json:"advance"`
	Reset   bool              `json:"reset"`
	// NA lists paths printed as "N/A" ("usage.gfx_activity",
	// "clock.gfx_3.clk", "violation.ppt_accumulated", "temperature").
	NA []string `json:"na"`
	// Drop lists paths left out.
	Drop []string `json:"drop"`
	// BareNumbers prints the quantities as bare numbers (amd-smi before
	// ROCm 6.1).
	BareNumbers bool `json:"bare_numbers"`
	// GPU overrides the step for one GPU (keyed by its index).
	GPU map[string]*step `json:"gpu"`
	// Exit, when not zero, makes the call print Msg and exit with it.
	Exit int    `json:"exit"`
	Msg  string `json:"msg"`
	// SleepMS delays the answer; every sleep ends within maxSleep.
	SleepMS int `json:"sleep_ms"`
	// Raw, when set, is printed instead of the answer.
	Raw *string `json:"raw"`
	// Twice prints GPU 0's entry twice; Skip leaves out GPU 1's.
	Twice bool `json:"twice"`
	Skip  bool `json:"skip"`
}

type config struct {
	// ROCm is "7" (the default) or "6". ROCm 7 prints the static compute
	// partition as partition.accelerator_partition, as amd-smi 25 and 26
	// do; ROCm 6 as partition.compute_partition (OldPartitionKey makes
	// ROCm 7 do so too).
	ROCm            string `json:"rocm"`
	OldPartitionKey bool   `json:"old_partition_key"`
	// Partition, when set for a GPU (keyed by its index), is printed as
	// its static partition object as it is written (a test gives the
	// object of a real answer).
	Partition map[string]json.RawMessage `json:"partition"`
	// GPUs is the number of GPUs (default 1); XCDs per GPU (default 8).
	GPUs int `json:"gpus"`
	XCDs int `json:"xcds"`
	// The static fields, per GPU in GPUStatic (keyed by index) over these.
	Name      string                    `json:"market_name"`
	Driver    string                    `json:"driver"`
	CapW      any                       `json:"cap_w"`
	Compute   string                    `json:"compute_partition"`
	Memory    string                    `json:"memory_partition"`
	GPUStatic map[string]map[string]any `json:"gpu_static"`
	// UUIDs overrides the GPUs' UUIDs by index.
	UUIDs map[string]string `json:"uuids"`
	// List and Static, when set, are the steps of those calls (a failure,
	// a hang, or Raw output).
	List   *step `json:"list"`
	Static *step `json:"static"`
	// Plan holds one step per metric call, the probe's first; after the
	// last, the last repeats (or, with Cycle, the plan starts over at its
	// second step).
	Plan  []*step `json:"plan"`
	Cycle bool    `json:"cycle"`
	// PCIe makes the GPUs give their PCIe link: metric --pcie's width and
	// speed, and static --bus's maximum, Gen5 x16 (32 GT/s) as an MI300X
	// trains; without it amd-smi prints N/A for them. PCIeDegraded makes
	// a busy GPU's link run at Gen4 x8 (16 GT/s), an idle one's at the
	// maximum.
	PCIe         bool `json:"pcie"`
	PCIeDegraded bool `json:"pcie_degraded"`
}

// maxSleep bounds every sleep, so a fake the sampler failed to kill still
// goes away.
const maxSleep = 30 * time.Second

// spread are the XCDs' clocks above the lowest, as one real MI355X reading
// spread its eight XCDs over tens of MHz.
var spread = []int{0, 12, 30, 8, 41, 5, 19, 26}

// causes are the accumulators amd-smi prints, in its order.
var causes = []string{"prochot_accumulated", "ppt_accumulated", "socket_thermal_accumulated", "vr_thermal_accumulated", "hbm_thermal_accumulated"}

func main() {
	exe, err := os.Executable()
	if err != nil {
		fail(98, err.Error())
	}
	dir := filepath.Dir(exe)
	logf, err := os.OpenFile(filepath.Join(dir, "fakeamdsmi.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintln(logf, strings.Join(os.Args[1:], " "))
		logf.Close()
	}
	var cfg config
	if data, err := os.ReadFile(filepath.Join(dir, "fakeamdsmi.json")); err == nil {
		if err := json.Unmarshal(data, &cfg); err != nil {
			fail(98, "fakeamdsmi.json: "+err.Error())
		}
	}
	if cfg.GPUs == 0 {
		cfg.GPUs = 1
	}
	if cfg.XCDs == 0 {
		cfg.XCDs = 8
	}
	if cfg.ROCm == "" {
		cfg.ROCm = "7"
	}
	args := os.Args[1:]
	switch {
	case len(args) == 2 && args[0] == "list" && args[1] == "--json":
		// Both generations list the GPUs as a bare list.
		bare := cfg
		bare.ROCm = "6"
		run(cfg.List, func() any { return cfg.list() }, bare)
	case strings.Join(args, " ") == "static --asic --bus --driver --limit --partition --json":
		run(cfg.Static, func() any { return cfg.static() }, cfg)
	case len(args) > 0 && args[0] == "metric":
		cfg.metric(dir, args[1:])
	default:
		fail(99, "fakeamdsmi: refusing "+strings.Join(args, " "))
	}
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(code)
}

// run answers one call: s's failure, sleep or Raw output, else answer().
func run(s *step, answer func() any, cfg config) {
	if s != nil {
		if s.SleepMS > 0 {
			time.Sleep(min(time.Duration(s.SleepMS)*time.Millisecond, maxSleep))
		}
		if s.Exit != 0 {
			fail(s.Exit, s.Msg)
		}
		if s.Raw != nil {
			fmt.Print(*s.Raw)
			return
		}
	}
	emit(cfg, answer())
}

// emit prints a list of GPU objects in the ROCm generation's shape.
func emit(cfg config, list any) {
	var v any = list
	if cfg.ROCm == "7" {
		v = map[string]any{"gpu_data": list}
	}
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		fail(98, err.Error())
	}
	fmt.Println(string(b))
}

func (c config) uuid(i int) string {
	if u, ok := c.UUIDs[strconv.Itoa(i)]; ok {
		return u
	}
	return fmt.Sprintf("%02xff74a1-0000-1000-80d1-3c23a958%04x", 0xab+i*0x11, i)
}

func (c config) list() any {
	var out []any
	for i := 0; i < c.GPUs; i++ {
		out = append(out, obj("gpu", i, "bdf", fmt.Sprintf("0000:%02x:00.0", 5+0x21*i), "uuid", c.uuid(i),
			"kfd_id", 20000+i, "node_id", 2+i, "partition_id", 0))
	}
	return out
}

func (c config) static() any {
	var out []any
	for i := 0; i < c.GPUs; i++ {
		v := map[string]any{"market_name": or(c.Name, "AMD Instinct MI300X"), "driver": or(c.Driver, "6.10.5"),
			"cap_w": c.CapW, "compute_partition": or(c.Compute, "SPX"), "memory_partition": or(c.Memory, "NPS1")}
		if v["cap_w"] == nil {
			v["cap_w"] = 750
		}
		for k, x := range c.GPUStatic[strconv.Itoa(i)] {
			v[k] = x
		}
		capW := v["cap_w"]
		if f, ok := capW.(float64); ok {
			capW = withUnit(f, "W")
		} else if n, ok := capW.(int); ok {
			capW = withUnit(float64(n), "W")
		}
		var limit any
		if c.ROCm == "7" {
			limit = obj("ppt0", obj("max_power_limit", withUnit(750, "W"), "min_power_limit", withUnit(0, "W"), "socket_power_limit", capW),
				"ppt1", obj("max_power_limit", "N/A", "min_power_limit", "N/A", "socket_power_limit", "N/A"),
				"slowdown_edge_temperature", "N/A", "slowdown_hotspot_temperature", withUnit(100, "C"))
		} else {
			limit = obj("max_power", withUnit(750, "W"), "min_power", withUnit(0, "W"), "socket_power", capW,
				"slowdown_edge_temperature", "N/A", "slowdown_hotspot_temperature", withUnit(100, "C"))
		}
		bus := obj("bdf", fmt.Sprintf("0000:%02x:00.0", 5+0x21*i), "max_pcie_width", "N/A", "max_pcie_speed", "N/A",
			"pcie_interface_version", "N/A", "slot_type", "OAM")
		if c.PCIe {
			bus = obj("bdf", fmt.Sprintf("0000:%02x:00.0", 5+0x21*i), "max_pcie_width", 16, "max_pcie_speed", withUnit(32, "GT/s"),
				"pcie_interface_version", "Gen 5", "slot_type", "OAM")
		}
		out = append(out, obj("gpu", i,
			"asic", obj("market_name", v["market_name"], "vendor_id", "0x1002", "vendor_name", "Advanced Micro Devices Inc. [AMD/ATI]",
				"device_id", "0x74a1", "target_graphics_version", "gfx942"),
			"bus", bus,
			"driver", obj("name", "amdgpu", "version", v["driver"]),
			"limit", limit,
			"partition", c.partition(i, v)))
	}
	return out
}

// partition is the static answer's partition object: ROCm 7 names the
// compute partition accelerator_partition, with the memory allocation
// mode amd-smi 26 adds (amdsmi_cli/amdsmi_commands.py); older ones
// compute_partition.
func (c config) partition(i int, v map[string]any) any {
	if raw, ok := c.Partition[strconv.Itoa(i)]; ok {
		return raw
	}
	if c.ROCm == "7" && !c.OldPartitionKey {
		return obj("accelerator_partition", v["compute_partition"], "memory_partition", v["memory_partition"], "partition_id", 0,
			"compute_partition_mem_alloc_mode", "CAPPING")
	}
	return obj("compute_partition", v["compute_partition"], "memory_partition", v["memory_partition"], "partition_id", 0)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// metric answers one metric call, the state file's count telling which.
func (c config) metric(dir string, args []string) {
	var gpus []int
	flag := ""
	energy := false
	want := map[string]bool{"--usage": true, "--power": true, "--clock": true, "--temperature": true, "--perf-level": true, "--mem-usage": true, "--pcie": true, "--json": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-g":
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				n, err := strconv.Atoi(args[i])
				if err != nil || n < 0 || n >= c.GPUs {
					fail(255, fmt.Sprintf("amd-smi: error: argument -g/--gpu: Invalid GPU ID %q", args[i]))
				}
				gpus = append(gpus, n)
			}
		case a == "--violation" && c.ROCm == "6":
			fail(2, "usage: amd-smi metric [-h] [-g GPU [GPU ...]] ...\namd-smi metric: error: unrecognized arguments: --violation")
		case a == "--violation" || a == "--throttle":
			flag = a
		case a == "--energy":
			energy = true
		case want[a]:
			delete(want, a)
		default:
			fail(99, "fakeamdsmi: refusing metric argument "+a)
		}
	}
	if len(want) > 0 || flag == "" || len(gpus) == 0 {
		fail(99, "fakeamdsmi: refusing metric "+strings.Join(args, " "))
	}
	n := bump(filepath.Join(dir, "fakeamdsmi.state"))
	s := c.stepAt(n)
	if s.SleepMS > 0 {
		time.Sleep(min(time.Duration(s.SleepMS)*time.Millisecond, maxSleep))
	}
	if s.Exit != 0 {
		fail(s.Exit, s.Msg)
	}
	if s.Raw != nil {
		fmt.Print(*s.Raw)
		return
	}
	objKey := strings.TrimPrefix(flag, "--")
	var out []any
	for _, g := range gpus {
		if s.Skip && g == 1 {
			continue
		}
		out = append(out, c.gpuMetric(n, g, objKey, energy))
		if s.Twice && g == 0 {
			out = append(out, c.gpuMetric(n, g, objKey, energy))
		}
	}
	emit(c, out)
}

// stepAt is the plan's step of metric call n (0 is the probe's).
func (c config) stepAt(n int) *step {
	switch {
	case len(c.Plan) == 0:
		return &step{}
	case n < len(c.Plan):
		return c.Plan[n]
	case c.Cycle && len(c.Plan) > 1:
		return c.Plan[1+(n-1)%(len(c.Plan)-1)]
	}
	return c.Plan[len(c.Plan)-1]
}

// forGPU is s with GPU g's overrides applied.
func (s *step) forGPU(g int) step {
	v := *s
	if o := s.GPU[strconv.Itoa(g)]; o != nil {
		if o.MHz != 0 {
			v.MHz = o.MHz
		}
		if o.Clocks != nil {
			v.Clocks = o.Clocks
		}
		if o.Activity != nil {
			v.Activity = o.Activity
		}
		if o.PowerW != nil {
			v.PowerW = o.PowerW
		}
		if o.HotspotC != nil {
			v.HotspotC = o.HotspotC
		}
		if o.UsedMB != nil {
			v.UsedMB = o.UsedMB
		}
		if o.MaxClk != 0 {
			v.MaxClk = o.MaxClk
		}
		if o.Perf != "" {
			v.Perf = o.Perf
		}
		if o.Advance != nil {
			v.Advance = o.Advance
		}
		v.Reset = v.Reset || o.Reset
		v.NA = append(append([]string(nil), v.NA...), o.NA...)
		v.Drop = append(append([]string(nil), v.Drop...), o.Drop...)
	}
	return v
}

// acc is GPU g's accumulators at metric call n: the sums of the advances
// of the steps up to it, from the last reset.
func (c config) acc(n, g int) map[string]uint64 {
	acc := map[string]uint64{}
	for k := 0; k <= n; k++ {
		s := c.stepAt(k).forGPU(g)
		if s.Reset {
			acc = map[string]uint64{}
		}
		for key, d := range s.Advance {
			acc[key] += d
		}
	}
	return acc
}

// energyJ is GPU g's energy counter at metric call n, in J: a start, then
// each call's socket power for one second.
func (c config) energyJ(n, g int) float64 {
	j := 20909145.914 + float64(g)*202449.416
	for k := 1; k <= n; k++ {
		p := 612.0
		if s := c.stepAt(k).forGPU(g); s.PowerW != nil {
			p = *s.PowerW
		}
		j += p
	}
	return j
}

func (c config) gpuMetric(n, g int, objKey string, energy bool) any {
	s := c.stepAt(n).forGPU(g)
	q := func(v float64, unit string) any {
		if s.BareNumbers {
			return v
		}
		return withUnit(v, unit)
	}
	mhz := s.MHz
	if mhz == 0 {
		mhz = 2080
	}
	clocks := s.Clocks
	if clocks == nil {
		for k := 0; k < c.XCDs; k++ {
			clocks = append(clocks, mhz+spread[k%len(spread)])
		}
	}
	maxClk := s.MaxClk
	if maxClk == 0 {
		maxClk = 2100
	}
	clock := newObj()
	for k := 0; k < 8; k++ {
		e := obj("clk", "N/A", "min_clk", "N/A", "max_clk", "N/A", "clk_locked", "N/A", "deep_sleep", "N/A")
		if k < len(clocks) {
			e = obj("clk", q(float64(clocks[k]), "MHz"), "min_clk", q(500, "MHz"), "max_clk", q(float64(maxClk), "MHz"),
				"clk_locked", "DISABLED", "deep_sleep", "DISABLED")
		}
		clock.set(fmt.Sprintf("gfx_%d", k), e)
	}
	clock.set("mem_0", obj("clk", q(1300, "MHz"), "min_clk", q(900, "MHz"), "max_clk", q(1300, "MHz"), "clk_locked", "N/A", "deep_sleep", "DISABLED"))
	activity, power, hot := 97, 612.0, 71.0
	if s.Activity != nil {
		activity = *s.Activity
	}
	if s.PowerW != nil {
		power = *s.PowerW
	}
	if s.HotspotC != nil {
		hot = *s.HotspotC
	}
	used := 150000.0
	if s.UsedMB != nil {
		used = *s.UsedMB
	}
	acc := c.acc(n, g)
	viol := obj("accumulation_counter", uint64(1000+n*10))
	for _, k := range causes {
		viol.set(k, acc[k])
	}
	for _, k := range []string{"prochot", "ppt", "socket_thermal", "vr_thermal", "hbm_thermal"} {
		viol.set(k+"_violation_status", "NOT ACTIVE")
	}
	perf := s.Perf
	if perf == "" {
		perf = "AMDSMI_DEV_PERF_LEVEL_AUTO"
	}
	m := obj("gpu", g,
		"usage", obj("gfx_activity", q(float64(activity), "%"), "umc_activity", q(40, "%"), "mm_activity", "N/A"),
		"power", obj("socket_power", q(power, "W"), "gfx_voltage", q(850, "mV"), "soc_voltage", q(780, "mV"), "mem_voltage", q(1100, "mV"),
			"throttle_status", "N/A", "power_management", "ENABLED"),
		"clock", clock,
		"temperature", obj("edge", "N/A", "hotspot", q(hot, "C"), "mem", q(hot-12, "C")),
		"perf_level", perf,
		"mem_usage", obj("total_vram", q(196592, "MB"), "used_vram", q(used, "MB"), "free_vram", q(196592-used, "MB"),
			"total_visible_vram", q(196592, "MB"), "used_visible_vram", q(used, "MB"), "free_visible_vram", q(196592-used, "MB"),
			"total_gtt", q(257432, "MB"), "used_gtt", q(31, "MB"), "free_gtt", q(257401, "MB")),
		"pcie", c.pcie(activity),
		objKey, viol)
	if energy {
		m.set("energy", obj("total_energy_consumption", q(c.energyJ(n, g), "J")))
	}
	for _, p := range s.NA {
		m.put(strings.Split(p, "."), "N/A")
	}
	for _, p := range s.Drop {
		m.put(strings.Split(p, "."), nil)
	}
	return m
}

// pcie is metric --pcie's block of a GPU at the given activity.
func (c config) pcie(activity int) any {
	width, speed := any("N/A"), any("N/A")
	switch {
	case c.PCIe && c.PCIeDegraded && activity > 0:
		width, speed = 8, withUnit(16, "GT/s")
	case c.PCIe:
		width, speed = 16, withUnit(32, "GT/s")
	}
	return obj("width", width, "speed", speed, "bandwidth", "N/A", "replay_count", 0, "l0_to_recovery_count", 0,
		"replay_roll_over_count", 0, "nak_sent_count", 0, "nak_received_count", 0)
}

func withUnit(v float64, unit string) any { return obj("value", v, "unit", unit) }

// ordered is a JSON object that keeps its keys in the order set, as
// amd-smi prints them.
type ordered struct {
	keys []string
	vals map[string]any
}

func newObj() *ordered { return &ordered{vals: map[string]any{}} }

func obj(kv ...any) *ordered {
	o := newObj()
	for i := 0; i < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *ordered) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// put sets the value at path, removing it for nil; a missing step is
// created.
func (o *ordered) put(path []string, v any) {
	if len(path) == 1 {
		if v == nil {
			delete(o.vals, path[0])
			for i, k := range o.keys {
				if k == path[0] {
					o.keys = append(o.keys[:i], o.keys[i+1:]...)
					break
				}
			}
			return
		}
		o.set(path[0], v)
		return
	}
	next, ok := o.vals[path[0]].(*ordered)
	if !ok {
		next = newObj()
		o.set(path[0], next)
	}
	next.put(path[1:], v)
}

func (o *ordered) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// bump adds one to the count in path and returns the count before.
func bump(path string) int {
	n := 0
	if data, err := os.ReadFile(path); err == nil {
		n, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(n+1)), 0o644); err == nil {
		os.Rename(tmp, path)
	}
	return n
}
