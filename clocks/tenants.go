package clocks

import (
	"fmt"
	"strings"

	"github.com/clockgate/clockgate/strictjson"
)

// ComputeProcesses are the compute processes the driver listed on the
// leg's GPUs at its first and last reading (SPEC §10.1, another tenant),
// and the pids of the sampler's own processes at those moments: the
// recorded command, the --pid process, the engine's processes (SPEC §11.1)
// and their descendants.
type ComputeProcesses struct {
	First []ComputeProcess `json:"first"`
	Last  []ComputeProcess `json:"last"`
	Own   []int            `json:"own"`
	// Engine are the processes named as the engine under test
	// (--engine-pid, --engine-port), each with how it was named; absent
	// when none was.
	Engine []Engine `json:"engine,omitempty"`
}

// Engine is one process named as the engine under test (SPEC §11.1): it and
// its descendants are the leg's own.
type Engine struct {
	PID int `json:"pid"`
	// How is EnginePID, or EnginePortPrefix and the TCP port it listened
	// on ("port:8000").
	How string `json:"how"`
}

// How an engine process was named.
const (
	// EnginePID: named with --engine-pid.
	EnginePID = "pid"
	// EnginePortPrefix, followed by the port: the process listening on
	// the --engine-port when sampling started.
	EnginePortPrefix = "port:"
)

// EngineHint is what clock.foreign_process adds for a process already
// present at the first reading: the engine under test, started before the
// leg, is named as the leg's own with these flags.
const EngineHint = "if it is the engine under test, started before the leg, name it with --engine-pid PID or --engine-port PORT"

// validEngineHow reports whether how is "pid" or "port:N" with N a TCP
// port (1 to 65535, no sign or leading zero).
func validEngineHow(how string) bool {
	if how == EnginePID {
		return true
	}
	n, ok := strings.CutPrefix(how, EnginePortPrefix)
	if !ok || n == "" || n[0] == '0' || len(n) > 5 {
		return false
	}
	port := 0
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
		port = port*10 + int(c-'0')
	}
	return port <= 65535
}

// ComputeProcess is one compute process on a GPU, as the driver names it,
// and what the sampler's /proc said of its pid.
type ComputeProcess struct {
	PID     int    `json:"pid"`
	Name    string `json:"process_name"`
	GPUUUID string `json:"gpu_uuid"`
	// Proc is ProcOwn, ProcForeign or ProcUnknown.
	Proc string `json:"proc"`
}

// What the sampler's /proc said of a compute process's pid.
const (
	// ProcOwn: the pid is the recorded command, the --pid process or one
	// of their descendants.
	ProcOwn = "own"
	// ProcForeign: the pid is in /proc and is none of those: another
	// tenant.
	ProcForeign = "foreign"
	// ProcUnknown: the pid is not in the sampler's /proc (the driver sees
	// the host's pids from inside a container), so whose it is is unknown.
	ProcUnknown = "unknown"
)

// parseComputeProcesses reads the record's compute_processes, where
// present: first and last lists of processes, each with a positive pid,
// its name, a GPU of the record, and what /proc said of it; own the pids
// marked own, each once, exactly those.
func parseComputeProcesses(o *obj, r *Record) {
	if _, ok := o.v.Fields["compute_processes"]; !ok || o.err != nil {
		return
	}
	co := o.object("compute_processes")
	if co == nil {
		return
	}
	uuids := map[string]bool{}
	for _, g := range r.GPUs {
		uuids[g.UUID] = true
	}
	cp := &ComputeProcesses{}
	marked := map[int]bool{}
	for _, at := range []string{"first", "last"} {
		list := co.get(at)
		if list == nil {
			break
		}
		if list.Kind != strictjson.Array {
			co.fail(at, "want an array of processes, found %s", list.Describe())
			break
		}
		for i, e := range list.Elems {
			name := fmt.Sprintf("%s[%d]", at, i)
			if e.Kind != strictjson.Object {
				co.fail(name, "want a process, found %s", e.Describe())
				break
			}
			po := &obj{v: e, prefix: co.prefix + name + "."}
			p := ComputeProcess{PID: po.intMin("pid", 1), Name: po.str("process_name"), GPUUUID: po.str("gpu_uuid"), Proc: po.str("proc")}
			switch {
			case po.err != nil:
			case !uuids[p.GPUUUID]:
				po.fail("gpu_uuid", "%q is none of the record's GPUs", p.GPUUUID)
			case p.Proc != ProcOwn && p.Proc != ProcForeign && p.Proc != ProcUnknown:
				po.fail("proc", "want %s, %s or %s; found %q", ProcOwn, ProcForeign, ProcUnknown, p.Proc)
			}
			if po.err != nil {
				co.err = po.err
				break
			}
			if p.Proc == ProcOwn {
				marked[p.PID] = true
			}
			if at == "first" {
				cp.First = append(cp.First, p)
			} else {
				cp.Last = append(cp.Last, p)
			}
		}
		if co.err != nil {
			break
		}
	}
	if own := co.get("own"); co.err == nil && own != nil {
		if own.Kind != strictjson.Array {
			co.fail("own", "want an array of pids, found %s", own.Describe())
		}
		seen := map[int]bool{}
		for i, e := range own.Elems {
			pid := co.asInt(fmt.Sprintf("own[%d]", i), e, 1)
			if co.err != nil {
				break
			}
			if seen[pid] {
				co.fail(fmt.Sprintf("own[%d]", i), "pid %d twice", pid)
				break
			}
			if !marked[pid] {
				co.fail(fmt.Sprintf("own[%d]", i), "pid %d is no process marked %s", pid, ProcOwn)
				break
			}
			seen[pid] = true
			cp.Own = append(cp.Own, pid)
		}
		for pid := range marked {
			if co.err == nil && !seen[pid] {
				co.fail("own", "lacks pid %d, marked %s", pid, ProcOwn)
			}
		}
	}
	if eng, ok := co.v.Fields["engine"]; co.err == nil && ok {
		parseEngines(co, eng, cp)
	}
	if co.err != nil {
		o.err = co.err
		return
	}
	r.ComputeProcesses = cp
}

// parseEngines reads compute_processes.engine: the processes named as the
// engine under test, each pid once, each named "pid" or "port:N".
func parseEngines(co *obj, eng *strictjson.Value, cp *ComputeProcesses) {
	if eng.Kind != strictjson.Array {
		co.fail("engine", "want an array of processes, found %s", eng.Describe())
		return
	}
	seen := map[int]bool{}
	for i, e := range eng.Elems {
		name := fmt.Sprintf("engine[%d]", i)
		if e.Kind != strictjson.Object {
			co.fail(name, "want {\"pid\", \"how\"}, found %s", e.Describe())
			return
		}
		eo := &obj{v: e, prefix: co.prefix + name + "."}
		en := Engine{PID: eo.intMin("pid", 1), How: eo.str("how")}
		switch {
		case eo.err != nil:
		case !validEngineHow(en.How):
			eo.fail("how", "want %q or %q and a TCP port, found %q", EnginePID, EnginePortPrefix+"N", en.How)
		case seen[en.PID]:
			eo.fail("pid", "pid %d named twice", en.PID)
		}
		if eo.err != nil {
			co.err = eo.err
			return
		}
		seen[en.PID] = true
		cp.Engine = append(cp.Engine, en)
	}
}

// checkTenants gates another tenant (SPEC §10.1): a compute process on the
// leg's GPUs that the sampler's /proc shows and that is neither the
// recorded command, the --pid process nor one of their descendants is
// clock.foreign_process. Processes whose pids the sampler's /proc does not
// show (it ran in a container) are listed by summarize, never gated.
func (l *Leg) checkTenants() {
	cp := l.Record.ComputeProcesses
	if cp == nil {
		return
	}
	type seen struct {
		p     ComputeProcess
		first bool
		last  bool
	}
	var order []string
	byKey := map[string]*seen{}
	note := func(ps []ComputeProcess, first bool) {
		for _, p := range ps {
			if p.Proc != ProcForeign {
				continue
			}
			k := fmt.Sprintf("%d\x00%s", p.PID, p.GPUUUID)
			s, ok := byKey[k]
			if !ok {
				s = &seen{p: p}
				byKey[k] = s
				order = append(order, k)
			}
			if first {
				s.first = true
			} else {
				s.last = true
			}
		}
	}
	note(cp.First, true)
	note(cp.Last, false)
	if len(order) == 0 {
		return
	}
	var parts []string
	atFirst := false
	for _, k := range order {
		s := byKey[k]
		atFirst = atFirst || s.first
		when := "at the first reading"
		switch {
		case s.first && s.last:
			when = "at the first and the last reading"
		case s.last:
			when = "at the last reading"
		}
		parts = append(parts, fmt.Sprintf("pid %d %q on %s %s", s.p.PID, s.p.Name, s.p.GPUUUID, when))
	}
	hint := ""
	if atFirst {
		hint = "; " + EngineHint
	}
	l.add(CodeForeignProcess, "another tenant on the leg's GPUs: %s; it is neither the recorded command, the --pid process, the named engine nor one of their descendants, and its work shares the GPU and its power budget: stop it before the leg%s",
		strings.Join(parts, "; "), hint)
}
