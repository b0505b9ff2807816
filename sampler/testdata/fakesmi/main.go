// Command fakesmi stands in for nvidia-smi in clockgate's tests. It answers
// only --query-gpu=FIELDS --format=csv[,noheader][,nounits] [-i LIST] and
// --query-compute-apps=pid,process_name,gpu_uuid --format=csv,noheader, the
// forms clockgate may use, and exits 99 on any other argument, so a test
// proves the sampler never asks nvidia-smi to change GPU state.
//
// It has one or several identical GPUs (gpus), whose values can be set per
// GPU (gpu_values) and per call (plan). Without -i it answers for every GPU,
// one line each in index order; -i takes an index or a comma list of them
// and answers for those GPUs, in index order (or in the order set by
// order). An -i naming any GPU it does not have (or that is not an index)
// prints "No devices were found" and exits 6, as real nvidia-smi does
// (sampler/testdata/real-smi/README.md quotes the sources).
//
// It reads its behaviour from fakesmi.json beside its own executable (each
// test links the binary into its own directory), appends every argv to
// fakesmi.log there, and counts sample queries (queries naming clocks.sm)
// in fakesmi.state there. Every value it prints is synthetic.
//
// Under Slurm each node runs its own fake GPU: with $SLURMD_NODENAME set
// (to NODE), fakesmi.NODE.json beside the executable, where it exists, is
// read over fakesmi.json (the fields it sets replace fakesmi.json's; a
// map's keys are added), so a test makes one node's GPU slower or hot;
// each GPU's uuid names the node; and the log, the state, the pids and the
// thermal state are NODE's own files (fakesmi.NODE.log, fakesmi.NODE.state,
// fakesmi.NODE.pids, STATE.NODE). Without the variable nothing changes.
package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

type step struct {
	// Values overrides printed values by field name, on every GPU;
	// "throttle" names either throttle spelling.
	Values map[string]string `json:"values"`
	// GPUValues overrides printed values on one GPU (keyed by its index),
	// after Values.
	GPUValues map[string]map[string]string `json:"gpu_values"`
	// Exit, when not zero, makes the call print Msg and exit with it.
	Exit int    `json:"exit"`
	Msg  string `json:"msg"`
	// SleepMS delays the answer (a slow call; a hung one when longer than
	// the sampler's query timeout). Every sleep ends by itself within
	// maxSleep, so a fake the sampler failed to kill still goes away.
	SleepMS int `json:"sleep_ms"`
	// Spawn starts a child (sleep 30) that holds the call's output open,
	// as a wrapper script's children would, before sleeping; the pids of
	// the call and of the child are appended to fakesmi.pids.
	Spawn bool `json:"spawn"`
	// Raw, when not empty, is printed instead of the answer.
	Raw string `json:"raw"`
}

type config struct {
	// Driver is "new" (590: rejects clocks_throttle_reasons.active, prints
	// the applications clock as deprecated; the default) or "old" (550:
	// rejects clocks_event_reasons.active).
	Driver string `json:"driver"`
	// GPUs is the number of GPUs (default 1).
	GPUs int `json:"gpus"`
	// GPUValues sets a GPU's own values (keyed by its index), over the
	// defaults: its uuid, name, clocks, utilization.
	GPUValues map[string]map[string]string `json:"gpu_values"`
	// Power makes the driver know the power fields of a datacenter GPU on
	// a 590 driver: enforced.power.limit (700 W), and the clock event
	// counters clocks_event_reasons_counters.* (µs). Without it the driver
	// prints [N/A] for them, as a GPU without power management does.
	Power bool `json:"power"`
	// Module adds module.enforced.power.limit (900 W), as a GH200 module's
	// driver gives it.
	Module bool `json:"module"`
	// ComputeApps names a file beside the executable whose text is the
	// answer to --query-compute-apps (lines "pid, name, gpu_uuid"), read
	// at each call so a test can name processes it starts ("@parent"
	// stands for the pid of the fake's parent, the sampler); "" makes the
	// fake refuse the query (exit 2), so a record has no compute
	// processes, as before it listed them.
	ComputeApps string `json:"compute_apps"`
	// LiveOnly lists, of the compute_apps lines, only those whose pid is
	// a running process (not gone, not a zombie), as the driver lists
	// only processes that hold a context: a server that wrote its pids
	// there leaves the listing when it dies.
	LiveOnly bool `json:"live_only"`
	// Thermal makes temperature.gpu and memory.used follow the load: a
	// GPU warms toward LoadC while a listed compute process is alive and
	// cools toward IdleC after, and each live process holds MemPerProcMiB
	// of GPU memory.
	Thermal *thermal `json:"thermal"`
	// Vbios makes the driver print vbios_version (96.00.A5.00.01, as a
	// real H100 on 590.48.01 does); without it the field is [N/A].
	Vbios bool `json:"vbios"`
	// PCIe makes the driver print the GPUs' PCIe links, at their maximum
	// Gen5 x16; without it the four fields are [N/A]. PCIeDegraded makes
	// the links run at Gen4 x8 while busy (a GPU in a slot that trained
	// low), and at the maximum when idle.
	PCIe         bool `json:"pcie"`
	PCIeDegraded bool `json:"pcie_degraded"`
	// OptionalNA lists optional fields printed as [N/A].
	OptionalNA []string `json:"optional_na"`
	// Rejects lists further fields the driver does not know.
	Rejects []string `json:"rejects"`
	// RejectSleepMS delays the answer to a query naming a rejected field.
	RejectSleepMS int `json:"reject_sleep_ms"`
	// IgnoreI answers for every GPU even when -i is given.
	IgnoreI bool `json:"ignore_i"`
	// WrongIndex answers -i N with index N+1.
	WrongIndex bool `json:"wrong_index"`
	// Order lists GPU indices in the order their lines are printed (as an
	// nvidia-smi that does not answer in index order would); the GPUs it
	// does not list follow in index order.
	Order []int `json:"order"`
	// List, when set, is the step of every query that does not name
	// clocks.sm (the GPU listing): a failure, a hang, or Raw output.
	List *step `json:"list"`
	// Plan holds one step per sample query; after the last, the last
	// repeats, or with Cycle the plan starts over.
	Plan  []step `json:"plan"`
	Cycle bool   `json:"cycle"`

	// node is $SLURMD_NODENAME: the Slurm node this fake GPU is on.
	node string
}

// nodeFile is name with the node's name before its extension (fakesmi.log:
// fakesmi.NODE.log), or name itself off Slurm.
func (c config) nodeFile(name string) string {
	if c.node == "" {
		return name
	}
	ext := filepath.Ext(name)
	if ext == "" {
		return name + "." + c.node
	}
	return strings.TrimSuffix(name, ext) + "." + c.node + ext
}

// thermal is a first-order thermal model of the GPUs, its state (the
// temperature and when it was computed) kept in State beside the fake.
type thermal struct {
	IdleC         float64 `json:"idle_c"`
	LoadC         float64 `json:"load_c"`
	TauMS         float64 `json:"tau_ms"`
	MemPerProcMiB float64 `json:"mem_per_proc_mib"`
	State         string  `json:"state"`
	// HotWhen names a file (relative to the fake's folder, or absolute):
	// while it exists and is not empty, the GPU reads HotC whatever the
	// model says. A test's GPU turns hot at an event the code under test
	// writes (a grid journal's first line), never at a wall-clock time.
	// CoolWhen names a file that, once it exists, ends HotWhen's heat.
	HotWhen  string  `json:"hot_when"`
	HotC     float64 `json:"hot_c"`
	CoolWhen string  `json:"cool_when"`
}

// maxSleep bounds every sleep of the fake.
const maxSleep = 30 * time.Second

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakesmi:", err)
		return 98
	}
	dir := filepath.Dir(exe)
	cfg := config{node: os.Getenv("SLURMD_NODENAME")}
	if f, err := os.OpenFile(filepath.Join(dir, cfg.nodeFile("fakesmi.log")), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
		fmt.Fprintln(f, strings.Join(args, " "))
		f.Close()
	}
	for _, name := range []string{"fakesmi.json", cfg.nodeFile("fakesmi.json")} {
		if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			if err := json.Unmarshal(data, &cfg); err != nil {
				fmt.Fprintf(os.Stderr, "fakesmi: %s: %v\n", name, err)
				return 98
			}
		}
		if cfg.node == "" {
			break
		}
	}
	if cfg.GPUs == 0 {
		cfg.GPUs = 1
	}

	if len(args) == 2 && args[0] == "--query-compute-apps=pid,process_name,gpu_uuid" && args[1] == "--format=csv,noheader" {
		if cfg.ComputeApps == "" {
			fmt.Println("fakesmi: no compute_apps configured")
			return 2
		}
		text, err := computeApps(cfg, dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakesmi:", err)
			return 98
		}
		fmt.Print(text)
		return 0
	}
	var query, format string
	var only map[int]bool // the GPUs -i names; nil: every GPU
	notFound := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--query-gpu="):
			query = strings.TrimPrefix(a, "--query-gpu=")
		case strings.HasPrefix(a, "--format="):
			format = strings.TrimPrefix(a, "--format=")
		case a == "-i" && i+1 < len(args):
			i++
			only = map[int]bool{}
			for _, id := range strings.Split(args[i], ",") {
				n, err := strconv.Atoi(id)
				if err != nil || n < 0 || n >= cfg.GPUs {
					notFound = true
				}
				only[n] = true
			}
		default:
			fmt.Fprintf(os.Stderr, "fakesmi: unexpected argument %q (only --query-gpu, --format, -i are allowed)\n", a)
			return 99
		}
	}
	if query == "" || !strings.HasPrefix(format, "csv") {
		fmt.Fprintln(os.Stderr, "fakesmi: want --query-gpu=… --format=csv…")
		return 99
	}
	fields := strings.Split(query, ",")
	rejected := map[string]bool{}
	for _, f := range cfg.Rejects {
		rejected[f] = true
	}
	if cfg.Driver == "old" {
		rejected["clocks_event_reasons.active"] = true
	} else {
		rejected["clocks_throttle_reasons.active"] = true
	}
	for _, f := range fields {
		if _, known := defaults(cfg, 0)[f]; !known || rejected[f] {
			time.Sleep(min(time.Duration(cfg.RejectSleepMS)*time.Millisecond, maxSleep))
			fmt.Printf("Field \"%s\" is not a valid field to query.\n\n", f)
			return 2
		}
	}
	if notFound {
		fmt.Println("No devices were found")
		return 6
	}

	var thermalC, memMiB string
	if cfg.Thermal != nil {
		c, procs := cfg.Thermal.now(cfg, dir)
		thermalC = strconv.FormatFloat(math.Round(c*10)/10, 'f', 1, 64)
		memMiB = strconv.FormatFloat(1+float64(procs)*cfg.Thermal.MemPerProcMiB, 'f', 0, 64)
	}
	st := step{}
	if cfg.List != nil {
		st = *cfg.List
	}
	for _, f := range fields {
		if f == "clocks.sm" {
			st = next(cfg, filepath.Join(dir, cfg.nodeFile("fakesmi.state")))
			break
		}
	}
	if st.Spawn {
		child := exec.Command("sleep", "30")
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fakesmi: spawn:", err)
			return 98
		}
		if f, err := os.OpenFile(filepath.Join(dir, cfg.nodeFile("fakesmi.pids")), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			fmt.Fprintf(f, "%d %d\n", os.Getpid(), child.Process.Pid)
			f.Close()
		}
	}
	if st.SleepMS > 0 {
		time.Sleep(min(time.Duration(st.SleepMS)*time.Millisecond, maxSleep))
	}
	if st.Exit != 0 {
		fmt.Println(st.Msg)
		return st.Exit
	}

	if st.Raw != "" {
		fmt.Print(st.Raw)
		return 0
	}
	units := !strings.Contains(format, "nounits")
	if !strings.Contains(format, "noheader") {
		fmt.Println(strings.Join(fields, ", "))
	}
	for _, i := range printOrder(cfg) {
		if only != nil && !only[i] && !cfg.IgnoreI {
			continue
		}
		vals := defaults(cfg, i)
		key := strconv.Itoa(i)
		for f, v := range cfg.GPUValues[key] {
			vals[f] = v
		}
		if cfg.WrongIndex {
			vals["index"] = strconv.Itoa(i + 1)
		}
		if cfg.Thermal != nil {
			vals["temperature.gpu"], vals["memory.used"] = thermalC, memMiB
		}
		if cfg.PCIe && cfg.PCIeDegraded && busy(vals, st, key) {
			vals["pcie.link.gen.gpucurrent"], vals["pcie.link.width.current"] = "4", "8"
		}
		out := make([]string, len(fields))
		for j, f := range fields {
			v := vals[f]
			for _, over := range []map[string]string{st.Values, st.GPUValues[key]} {
				if o, ok := over[f]; ok {
					v = o
				} else if o, ok := over["throttle"]; ok && strings.HasSuffix(f, "_reasons.active") {
					v = o
				}
			}
			for _, na := range cfg.OptionalNA {
				if na == f {
					v = "[N/A]"
				}
			}
			if units && !strings.HasPrefix(v, "[") {
				switch {
				case strings.HasPrefix(f, "clocks.") && !strings.HasSuffix(f, ".active"):
					v += " MHz"
				case f == "utilization.gpu":
					v += " %"
				case f == "power.draw" || strings.HasSuffix(f, "power.limit"):
					v += " W"
				case f == "memory.used":
					v += " MiB"
				case strings.HasPrefix(f, "clocks_event_reasons_counters."):
					v += " us"
				}
			}
			out[j] = v
		}
		fmt.Println(strings.Join(out, ", "))
	}
	return 0
}

// busy reports whether GPU key's printed utilization is not 0.
func busy(vals map[string]string, st step, key string) bool {
	u := vals["utilization.gpu"]
	for _, over := range []map[string]string{st.Values, st.GPUValues[key]} {
		if o, ok := over["utilization.gpu"]; ok {
			u = o
		}
	}
	return u != "0"
}

// printOrder is the order the GPUs' lines are printed in: cfg.Order, then
// the rest by index.
func printOrder(cfg config) []int {
	seen := map[int]bool{}
	var order []int
	for _, i := range cfg.Order {
		if i >= 0 && i < cfg.GPUs && !seen[i] {
			seen[i] = true
			order = append(order, i)
		}
	}
	for i := 0; i < cfg.GPUs; i++ {
		if !seen[i] {
			order = append(order, i)
		}
	}
	return order
}

// defaults returns GPU i's values by field, for the configured driver.
func defaults(cfg config, i int) map[string]string {
	driver, app := "590.44.01", "[Requested functionality has been deprecated]"
	if cfg.Driver == "old" {
		driver, app = "550.54.15", "1755"
	}
	m := map[string]string{
		"index":                          strconv.Itoa(i),
		"uuid":                           uuid(cfg.node, i),
		"name":                           "NVIDIA H100 80GB HBM3",
		"driver_version":                 driver,
		"clocks.sm":                      "1980",
		"clocks.max.sm":                  "1980",
		"clocks.applications.graphics":   app,
		"clocks_event_reasons.active":    "0x0000000000000000",
		"clocks_throttle_reasons.active": "0x0000000000000000",
		"persistence_mode":               "Enabled",
		"pstate":                         "P0",
		"utilization.gpu":                "100",
		"temperature.gpu":                "45",
		"power.draw":                     "312.45",
		"clocks.mem":                     "2619",
		"memory.used":                    "71234",
	}
	na := func(on bool, v string) string {
		if on {
			return v
		}
		return "[N/A]"
	}
	m["enforced.power.limit"] = na(cfg.Power, "700.00")
	for _, c := range []string{"sw_power_cap", "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"} {
		m["clocks_event_reasons_counters."+c] = na(cfg.Power, "0")
	}
	m["module.enforced.power.limit"] = na(cfg.Module, "900.00")
	m["vbios_version"] = na(cfg.Vbios, "96.00.A5.00.01")
	// An H100 SXM5's link: Gen5 x16 (nvidia-smi -q's "PCIe Generation
	// Max 5", "Link Width Max 16x").
	m["pcie.link.gen.gpucurrent"], m["pcie.link.width.current"] = na(cfg.PCIe, "5"), na(cfg.PCIe, "16")
	m["pcie.link.gen.max"], m["pcie.link.width.max"] = na(cfg.PCIe, "5"), na(cfg.PCIe, "16")
	return m
}

// uuid is GPU i's uuid; on a Slurm node, one of that node's own (the
// node name's FNV-1a hash in its last group).
func uuid(node string, i int) string {
	if node == "" {
		return fmt.Sprintf("GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a3%d", i)
	}
	h := fnv.New32a()
	h.Write([]byte(node))
	return fmt.Sprintf("GPU-7f3a9c2e-5b1d-4e8f-a6c4-%08x%04x", h.Sum32(), i)
}

// next returns the plan step of this sample query and counts it.
func next(cfg config, state string) step {
	n := 0
	if data, err := os.ReadFile(state); err == nil {
		n, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	os.WriteFile(state, []byte(strconv.Itoa(n+1)), 0o644)
	if len(cfg.Plan) == 0 {
		return step{}
	}
	if cfg.Cycle {
		return cfg.Plan[n%len(cfg.Plan)]
	}
	if n >= len(cfg.Plan) {
		n = len(cfg.Plan) - 1
	}
	return cfg.Plan[n]
}

// computeApps is the answer to --query-compute-apps: the file's lines,
// "@parent" replaced by the fake's parent's pid, and with LiveOnly only
// the lines of running processes.
func computeApps(cfg config, dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, cfg.ComputeApps))
	if err != nil {
		if os.IsNotExist(err) && cfg.LiveOnly {
			return "", nil
		}
		return "", err
	}
	text := strings.ReplaceAll(string(data), "@parent", strconv.Itoa(os.Getppid()))
	if !cfg.LiveOnly {
		return text, nil
	}
	var out strings.Builder
	for _, line := range strings.Split(text, "\n") {
		pid, _, _ := strings.Cut(line, ",")
		if n, err := strconv.Atoi(strings.TrimSpace(pid)); err == nil && alive(n) {
			out.WriteString(line + "\n")
		}
	}
	return out.String(), nil
}

// alive reports whether pid is a process that has not exited.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	k := strings.LastIndexByte(s, ')')
	if k < 0 || k+2 >= len(s) {
		return false
	}
	return s[k+2] != 'Z' && s[k+2] != 'X'
}

// now advances the thermal model to this call and returns the
// temperature and the number of live compute processes.
func (th *thermal) now(cfg config, dir string) (float64, int) {
	procs := 0
	if cfg.ComputeApps != "" {
		c := cfg
		c.LiveOnly = true
		if text, err := computeApps(c, dir); err == nil {
			procs = strings.Count(text, "\n")
		}
	}
	if th.HotWhen != "" {
		at := func(path string) string {
			if filepath.IsAbs(path) {
				return path
			}
			return filepath.Join(dir, path)
		}
		fi, err := os.Stat(at(th.HotWhen))
		_, cool := os.Stat(at(th.CoolWhen))
		if err == nil && fi.Size() > 0 && (th.CoolWhen == "" || cool != nil) {
			return th.HotC, procs
		}
	}
	state := filepath.Join(dir, th.State)
	if cfg.node != "" {
		state += "." + cfg.node
	}
	t := float64(time.Now().UnixNano()) / 1e6
	c := th.IdleC
	var st struct{ C, TMS float64 }
	if data, err := os.ReadFile(state); err == nil && json.Unmarshal(data, &st) == nil && st.TMS > t {
		// A state stamped in the future holds its temperature until then
		// (a test's GPU kept hot).
		return st.C, procs
	} else if err == nil && st.TMS > 0 {
		target := th.IdleC
		if procs > 0 {
			target = th.LoadC
		}
		dt := math.Max(0, t-st.TMS)
		c = target + (st.C-target)*math.Exp(-dt/math.Max(th.TauMS, 1))
	}
	data, _ := json.Marshal(struct{ C, TMS float64 }{c, t})
	tmp := state + "." + strconv.Itoa(os.Getpid())
	if os.WriteFile(tmp, data, 0o644) == nil {
		os.Rename(tmp, state)
	}
	return c, procs
}
