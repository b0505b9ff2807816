package clocks

// ComputeProcesses are the compute processes the driver listed on the
// leg's GPUs at its first and last reading (SPEC §10.1, another tenant),
// and the pids of the sampler's own processes at those moments: the
// recorded command, the --pid process and their descendants.
type ComputeProcesses struct {
	First []ComputeProcess `json:"first"`
	Last  []ComputeProcess `json:"last"`
	Own   []int            `json:"own"`
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
