package clocks

import (
	"strings"
	"testing"
)

// withProcs sets the record's compute processes on its GPU.
func withProcs(first, last []ComputeProcess, own ...int) func(*Record) {
	return func(r *Record) {
		for _, ps := range [][]ComputeProcess{first, last} {
			for i := range ps {
				ps[i].GPUUUID = r.GPUs[0].UUID
			}
		}
		if own == nil {
			own = []int{}
		}
		if first == nil {
			first = []ComputeProcess{}
		}
		if last == nil {
			last = []ComputeProcess{}
		}
		r.ComputeProcesses = &ComputeProcesses{First: first, Last: last, Own: own}
	}
}

// A compute process the sampler's /proc shows that is not the leg's own
// is clock.foreign_process, naming its pid, its name and when it was
// seen; the leg's own processes and those /proc does not show (a
// container) are not gated.
func TestForeignProcess(t *testing.T) {
	ss := cleanWindow(boot13)
	own := ComputeProcess{PID: 4100, Name: "python3", Proc: ProcOwn}
	foreign := ComputeProcess{PID: 777, Name: "/usr/bin/trainer", Proc: ProcForeign}
	unknown := ComputeProcess{PID: 91234, Name: "vllm", Proc: ProcUnknown}

	l := legOf(t, "r1", ss, withProcs([]ComputeProcess{own, foreign}, []ComputeProcess{own, foreign}, 4100))
	wantCodes(t, l.Reasons, CodeForeignProcess)
	uuid := l.Record.GPUs[0].UUID
	wantReason(t, l.Reasons, CodeForeignProcess, `another tenant on the leg's GPUs: pid 777 "/usr/bin/trainer" on `+uuid+` at the first and the last reading`, "stop it before the leg")

	l = legOf(t, "r1", ss, withProcs(nil, []ComputeProcess{foreign}))
	wantReason(t, l.Reasons, CodeForeignProcess, `pid 777 "/usr/bin/trainer" on `+uuid+` at the last reading;`)
	if msg := reasonMsg(l.Reasons, CodeForeignProcess); strings.Contains(msg, EngineHint) {
		t.Errorf("a process that came during the leg is not the engine started before it; the message names --engine-pid:\n%s", msg)
	}
	l = legOf(t, "r1", ss, withProcs([]ComputeProcess{foreign}, nil))
	wantReason(t, l.Reasons, CodeForeignProcess, `pid 777 "/usr/bin/trainer" on `+uuid+` at the first reading;`,
		"stop it before the leg; if it is the engine under test, started before the leg, name it with --engine-pid PID or --engine-port PORT")

	wantCodes(t, legOf(t, "r1", ss, withProcs([]ComputeProcess{own, unknown}, []ComputeProcess{unknown}, 4100)).Reasons)
	wantCodes(t, legOf(t, "r1", ss, withProcs(nil, nil)).Reasons)
	wantCodes(t, legOf(t, "r1", ss, nil).Reasons)
}

// The record's compute_processes are validated field by field.
func TestComputeProcessesValidated(t *testing.T) {
	ss := cleanWindow(boot13)
	r := recordOf(t, ss, StopPIDExit)
	withProcs([]ComputeProcess{{PID: 4100, Name: "python3", Proc: ProcOwn}}, []ComputeProcess{{PID: 777, Name: "x", Proc: ProcUnknown}}, 4100)(r)
	good := string(recordJSON(t, r))
	if _, err := ParseRecord([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{`"pid":4100`, `"pid":0`, "compute_processes.first[0].pid: want a positive integer, found 0"},
		{`"proc":"own"`, `"proc":"mine"`, `compute_processes.first[0].proc: want own, foreign or unknown; found "mine"`},
		{`"process_name":"x"`, `"process_name":""`, "compute_processes.last[0].process_name: empty string"},
		{`"own":[4100]`, `"own":[]`, "compute_processes.own: lacks pid 4100, marked own"},
		{`"own":[4100]`, `"own":[4100,777]`, "compute_processes.own[1]: pid 777 is no process marked own"},
		{`"own":[4100]`, `"own":[4100,4100]`, "compute_processes.own[1]: pid 4100 twice"},
		{`"last":[`, `"last":7,"x":[`, "compute_processes.last: want an array of processes, found number 7"},
		{`,"own":[4100]`, ``, "compute_processes.own: missing"},
		{`"own":[4100]`, `"own":[4100],"engine":7`, "compute_processes.engine: want an array of processes, found number 7"},
		{`"own":[4100]`, `"own":[4100],"engine":[{"pid":0,"how":"pid"}]`, "compute_processes.engine[0].pid: want a positive integer, found 0"},
		{`"own":[4100]`, `"own":[4100],"engine":[{"pid":4100,"how":"port:0"}]`, `compute_processes.engine[0].how: want "pid" or "port:N" and a TCP port, found "port:0"`},
		{`"own":[4100]`, `"own":[4100],"engine":[{"pid":4100,"how":"port:65536"}]`, `compute_processes.engine[0].how: want "pid" or "port:N" and a TCP port, found "port:65536"`},
		{`"own":[4100]`, `"own":[4100],"engine":[{"pid":4100,"how":"name"}]`, `compute_processes.engine[0].how: want "pid" or "port:N" and a TCP port, found "name"`},
		{`"own":[4100]`, `"own":[4100],"engine":[{"pid":4100,"how":"pid"},{"pid":4100,"how":"port:8000"}]`, "compute_processes.engine[1].pid: pid 4100 named twice"},
		{`"own":[4100]`, `"own":[4100],"engine":[{"pid":4100}]`, "compute_processes.engine[0].how: missing"},
	} {
		bad := strings.Replace(good, tc.from, tc.to, 1)
		if bad == good {
			t.Fatalf("%q not in %s", tc.from, good)
		}
		if _, err := ParseRecord([]byte(bad)); err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v\nwant %s", tc.to, err, tc.want)
		}
	}
	eng := strings.Replace(good, `"own":[4100]`, `"own":[4100],"engine":[{"pid":4100,"how":"port:8000"},{"pid":12,"how":"pid"}]`, 1)
	if back, err := ParseRecord([]byte(eng)); err != nil {
		t.Errorf("engines: %v", err)
	} else if e := back.ComputeProcesses.Engine; len(e) != 2 || e[0] != (Engine{4100, "port:8000"}) || e[1] != (Engine{12, EnginePID}) {
		t.Errorf("engines read back as %+v", e)
	} else if data := string(recordJSON(t, back)); !strings.Contains(data, `"engine":[{"pid":4100,"how":"port:8000"},{"pid":12,"how":"pid"}]`) {
		t.Errorf("engines not written back:\n%s", data)
	}
	bad := strings.Replace(good, `"gpu_uuid":"`+r.GPUs[0].UUID+`","proc"`, `"gpu_uuid":"GPU-other","proc"`, 1)
	if _, err := ParseRecord([]byte(bad)); err == nil || err.Error() != `compute_processes.first[0].gpu_uuid: "GPU-other" is none of the record's GPUs` {
		t.Errorf("another GPU: %v", err)
	}
}

// reasonMsg is the message of the first reason with code, "" when none.
func reasonMsg(reasons []Reason, code string) string {
	for _, r := range reasons {
		if r.Code == code {
			return r.Message
		}
	}
	return ""
}
