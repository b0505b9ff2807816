package grid

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The journal's events (SPEC §11.2), in the order a leg writes them.
const (
	EvGridStart   = "grid.start"
	EvGridResume  = "grid.resume"
	EvLegIdle     = "leg.idle"
	EvServerStart = "server.start"
	EvServerReady = "server.ready"
	EvServerStop  = "server.stop"
	EvLegCommit   = "leg.commit"
	EvLegFail     = "leg.fail"
	EvGridEnd     = "grid.end"
)

// JournalRel is the journal's path inside the tree.
const JournalRel = "grid/journal.jsonl"

// Event is one line of the journal. Which fields an event carries depends
// on its kind; the others are left out.
type Event struct {
	Event string `json:"event"`
	T     string `json:"t"`
	// grid.start (and grid.resume: the same identity, checked).
	PlanSHA256 string    `json:"plan_sha256,omitempty"`
	Model      string    `json:"model,omitempty"`
	Order      string    `json:"order,omitempty"`
	Seed       *int64    `json:"seed,omitempty"`
	Legs       []string  `json:"legs,omitempty"`
	BootID     string    `json:"boot_id,omitempty"`
	GPUUUIDs   []string  `json:"gpu_uuids,omitempty"`
	Driver     string    `json:"driver,omitempty"`
	IdleTempC  []float64 `json:"idle_temp_c,omitempty"`
	// The allocation of a [slurm] grid (grid.start, grid.resume): its
	// job id and the grid's nodes.
	SlurmJobID string   `json:"slurm_job_id,omitempty"`
	Nodes      []string `json:"nodes,omitempty"`
	// server.start on an allocation: each role's step id (JOBID.STEPID).
	Steps []string `json:"steps,omitempty"`
	// Leg events.
	Engine  string `json:"engine,omitempty"`
	N       int    `json:"n,omitempty"`
	Block   int    `json:"block,omitempty"`
	Slot    int    `json:"slot,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// leg.idle: each GPU's temperature and slope when the leg was let
	// start, and the wait for them.
	TempC        []float64 `json:"temp_c,omitempty"`
	SlopeCPerMin []float64 `json:"slope_c_per_min,omitempty"`
	WaitS        *float64  `json:"wait_s,omitempty"`
	// server.start, server.stop.
	PID      int      `json:"pid,omitempty"`
	Killed   []string `json:"killed,omitempty"`
	Leftover []string `json:"leftover,omitempty"`
	// leg.commit: each file's SHA-256 by its path in the tree; the leg's
	// clock verdict.
	Files   map[string]string `json:"files,omitempty"`
	Verdict string            `json:"verdict,omitempty"`
	// leg.fail: the phase and the cause; where the staging went.
	Phase   string `json:"phase,omitempty"`
	Cause   string `json:"cause,omitempty"`
	Staging string `json:"staging,omitempty"`
	// grid.end: done, stopped, or interrupted (with the signal).
	Status string `json:"status,omitempty"`
	Signal string `json:"signal,omitempty"`
}

// journal appends whole lines to the journal, each synced before the next
// step.
type journal struct {
	path string
	f    *os.File
	now  func() time.Time
}

func openJournal(path string, now func() time.Time) (*journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, err
	}
	return &journal{path: path, f: f, now: now}, nil
}

func (j *journal) write(e Event) error {
	e.T = j.now().UTC().Format("2006-01-02T15:04:05.000Z")
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("%s: %v", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("%s: %v", j.path, err)
	}
	return nil
}

func (j *journal) close() error { return j.f.Close() }

// ReadJournal reads the journal at path: nil and no error when there is
// none. A last line cut short (the grid died while writing it) is dropped
// and reported in torn; any other line that is not an event is an error
// naming path:line.
func ReadJournal(path string) (events []Event, torn bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		var e Event
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || e.Event == "" {
			if isLast(data, b) {
				return events, true, nil
			}
			if err == nil {
				err = errors.New("no event")
			}
			return nil, false, fmt.Errorf("%s:%d: not a journal event: %v", path, line, err)
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("%s: %v", path, err)
	}
	return events, false, nil
}

// isLast reports whether b is data's last line and data does not end in a
// newline: a line cut short.
func isLast(data, b []byte) bool {
	return len(data) > 0 && data[len(data)-1] != '\n' && bytes.HasSuffix(data, b)
}

// syncDir fsyncs a directory, so that the names created or renamed in it
// are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("%s: sync: %v", dir, err)
	}
	return nil
}
