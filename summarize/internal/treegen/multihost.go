package treegen

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// The multi-host scenarios (SPEC §12.3): legs in the directory form,
// clocks/<model>/<engine>/r<N>/leg.json with each host's stream and
// record under hosts/, prefill on node1 and decode on node2 and node3,
// each node a GB10 of its own on a boot of its own, chronyd synchronising
// every node. Registered after the others, so that the list's order stays
// fixed.

// hostGen makes a leg one host's part of a multi-host leg: mono_s on
// every sample (CLOCK_BOOTTIME, from monoBase), time_sync in the record;
// skip drops the first samples (a late sampler), and stepAt, when > 0,
// moves mono_s by stepS from that sample on (the wall clock stepped).
type hostGen struct {
	sync     *clocks.TimeSyncWindow
	monoBase float64
	skip     int
	stepAt   int
	stepS    float64
}

func (h *hostGen) apply(ss []clocks.Sample) []clocks.Sample {
	ss = ss[h.skip:]
	t0, err := time.Parse(time.RFC3339Nano, ss[0].T)
	if err != nil {
		panic(err)
	}
	for i := range ss {
		t, err := time.Parse(time.RFC3339Nano, ss[i].T)
		if err != nil {
			panic(err)
		}
		mono := h.monoBase + t.Sub(t0).Seconds()
		if h.stepAt > 0 && i >= h.stepAt {
			mono += h.stepS
		}
		mono = math.Round(mono*1e9) / 1e9
		ss[i].MonoS = &mono
	}
	return ss
}

// mhNode is one node of the multi-host scenarios.
type mhNode struct {
	name, role, uuid, boot string
	// monoBase is CLOCK_BOOTTIME at the leg's first sample: how long the
	// node had been up.
	monoBase float64
	// offsetS is chronyd's offset of the node's clock.
	offsetS float64
}

var mhNodes = []mhNode{
	{"node1", "prefill", "GPU-4c1e9a27-58d3-4f0b-a6e2-7d91c3b50f18", "3e7a2c91-0b4d-4f68-9a15-c2d8e6f04b73", 183402.117, 0.000021},
	{"node2", "decode", "GPU-a93f0d52-16b8-4e7c-8d24-5f0c1e7b9a36", "9b15d4e8-7c2a-4e91-b03f-6a8d2c5e1f94", 183398.442, -0.000034},
	{"node3", "decode", "GPU-d27b6e13-9a4f-4c58-b71e-0e3a8f62c4d9", "c6082f3b-4e9d-4a17-8c5b-2d7e1f9a0b68", 183411.905, 0.000012},
}

// chronyd is a node's time sync as sample --leg records it under chronyd
// synchronised to one server: the kernel synchronised, chronyc's tracking
// with the node's offset.
func chronyd(n mhNode, start, end time.Time) *clocks.TimeSyncWindow {
	at := func(t time.Time) *clocks.TimeSync {
		return &clocks.TimeSync{T: t.UTC().Format(time.RFC3339Nano),
			Kernel: &clocks.KernelTime{Synchronised: true, State: 0, Status: 0x2001, MaxErrorUS: 16500, EstErrorUS: 3},
			Chrony: &clocks.ChronyTracking{RefID: "0A000001", Stratum: 3, OffsetS: n.offsetS, RootDelayS: 0.000412,
				RootDispersionS: 0.000188, LeapStatus: "Normal", UpdateIntervalS: 64.2}}
	}
	return &clocks.TimeSyncWindow{Start: at(start), End: at(end)}
}

// dynamo is the disaggregated engine of the multi-host scenarios, and
// dynamoRerun the same engine again, for an A/A comparison.
var (
	dynamo      = engine{"dynamo", 1.0, 1.0}
	dynamoRerun = engine{"dynamo-rerun", 1.0, 1.0}
)

// mhLeg adds a leg of one (model, engine) across mhNodes: each node's
// part rendered as a leg of its own, its stream and record moved under
// hosts/; the client, node1, holds the bench results and the memory
// record. node, when not nil, changes a node's part.
func (t *tree) mhLeg(m model, e engine, run int, shift time.Duration, node func(k int, n *mhNode, l *leg)) {
	base := fmt.Sprintf("%s/%s/r%d", m.dir, e.name, run)
	man := clocks.LegManifest{Schema: clocks.LegSchema, IntervalS: 1, SkewBoundMS: 100, Client: mhNodes[0].name}
	for k, n := range mhNodes {
		g := gb10
		g.uuid = n.uuid
		l := t.leg(m, e, run, g, n.boot, func(l *leg) { l.start = l.start.Add(shift) })
		l.host = &hostGen{monoBase: n.monoBase}
		l.pw = &pointWin{zone: "Etc/UTC", marks: true, inset: true}
		if node != nil {
			node(k, &n, &l)
		}
		man.Hosts = append(man.Hosts, clocks.LegHost{Host: n.name, Role: n.role, Group: n.role})
		end := l.start.Add(30 * time.Minute)
		l.host.sync = chronyd(n, l.start, end)
		for p, b := range t.render(l) {
			switch p {
			case "clocks/" + base + ".samples.jsonl":
				t.put("clocks/"+base+"/hosts/"+n.name+".samples.jsonl", b)
			case "clocks/" + base + ".summary.json":
				t.put("clocks/"+base+"/hosts/"+n.name+".summary.json", b)
			case "clocks/" + base + ".points.jsonl":
				// clockgate mark --leg on the client: each line names it.
				if k == 0 {
					t.put("clocks/"+base+"/points.jsonl", []byte(strings.ReplaceAll(string(b), "}\n", `,"host":"`+n.name+`"}`+"\n")))
				}
			default:
				if k == 0 {
					t.put(p, b)
				}
			}
		}
	}
	t.put("clocks/"+base+"/leg.json", man.JSON())
}

// mhArms adds runs legs of dynamo and of dynamoRerun an hour later;
// node, when not nil, changes a node's part of one leg.
func (t *tree) mhArms(runs int, node func(e engine, run, k int, n *mhNode, l *leg)) {
	for _, e := range []engine{dynamo, dynamoRerun} {
		shift := time.Duration(0)
		if e == dynamoRerun {
			shift = time.Hour
		}
		for r := 1; r <= runs; r++ {
			var fix func(k int, n *mhNode, l *leg)
			if node != nil {
				fix = func(k int, n *mhNode, l *leg) { node(e, r, k, n, l) }
			}
			t.mhLeg(llama, e, r, shift, fix)
		}
	}
}

var multiHostScenarios = []Scenario{
	{Name: "multihost-aa", Baseline: "dynamo",
		About: "A/A of a three-host leg (SPEC §12.3): llama-3.1-8b-instruct with dynamo and dynamo-rerun, 2 runs each, prefill on node1 and decode on node2 and node3, " +
			"each node a GB10 of its own on its own boot, chronyd synchronised on every node (|offset| + root delay / 2 + root dispersion under 0.5 ms); the ratio ESTABLISHED",
		build: func(t *tree) { t.mhArms(2, nil) }},
	{Name: "multihost-wall-step", Baseline: "dynamo",
		About: "multihost-aa with node2's wall clock stepped 0.8 s back against mono_s mid-window in dynamo-rerun r1: that leg clock.wall_step, the ratio NOT ESTABLISHED",
		build: func(t *tree) {
			t.mhArms(2, func(e engine, run, k int, n *mhNode, l *leg) {
				if e == dynamoRerun && run == 1 && n.name == "node2" {
					l.host.stepAt, l.host.stepS = 40, 0.8
				}
			})
		}},
	{Name: "multihost-duplicate-uuid", Baseline: "dynamo",
		About: "multihost-aa with node3 claiming node2's GPU uuid in dynamo-rerun r1 (two samplers read one GPU): that leg clock.host_duplicate, " +
			"and its arm's legs sample different GPUs; the ratio NOT ESTABLISHED",
		build: func(t *tree) {
			t.mhArms(2, func(e engine, run, k int, n *mhNode, l *leg) {
				if e == dynamoRerun && run == 1 && n.name == "node3" {
					l.gpu.uuid = mhNodes[1].uuid
				}
			})
		}},
	{Name: "multihost-late-host", Baseline: "dynamo",
		About: "multihost-aa with node3's sampler starting 6 readings late in dynamo-rerun r1: that leg clock.host_window (over 3 intervals), the ratio NOT ESTABLISHED",
		build: func(t *tree) {
			t.mhArms(2, func(e engine, run, k int, n *mhNode, l *leg) {
				if e == dynamoRerun && run == 1 && n.name == "node3" {
					l.host.skip = 6
				}
			})
		}},
}

func init() { scenarios = append(scenarios, multiHostScenarios...) }
