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
	l = legOf(t, "r1", ss, withProcs([]ComputeProcess{foreign}, nil))
	wantReason(t, l.Reasons, CodeForeignProcess, `pid 777 "/usr/bin/trainer" on `+uuid+` at the first reading;`)

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
	} {
		bad := strings.Replace(good, tc.from, tc.to, 1)
		if bad == good {
			t.Fatalf("%q not in %s", tc.from, good)
		}
		if _, err := ParseRecord([]byte(bad)); err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v\nwant %s", tc.to, err, tc.want)
		}
	}
	bad := strings.Replace(good, `"gpu_uuid":"`+r.GPUs[0].UUID+`","proc"`, `"gpu_uuid":"GPU-other","proc"`, 1)
	if _, err := ParseRecord([]byte(bad)); err == nil || err.Error() != `compute_processes.first[0].gpu_uuid: "GPU-other" is none of the record's GPUs` {
		t.Errorf("another GPU: %v", err)
	}
}
