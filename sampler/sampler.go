// Package sampler records the GPU clock state of one benchmark leg. It reads
// the GPU at a fixed interval through a Backend (nvidia-smi or NVML), appends
// each sample to PREFIX.samples.jsonl as one whole line as soon as it is
// taken, and when it stops writes the record the stream folds to,
// PREFIX.summary.json, atomically.
//
// A sampler only reads GPU state; nothing here changes it (no clock locks,
// no applications clocks, no persistence mode, no reset). Any reading that
// cannot be taken whole is a refusal: the sampler stops and says why, and it
// never writes a default in place of a value.
package sampler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/clockgate/clockgate/atomicfile"
	"github.com/clockgate/clockgate/clocks"
)

// Backend reads one GPU's clock state. Every error from Read is a refusal to
// sample.
type Backend interface {
	// Name says which backend reads which GPU, and how, for status lines.
	Name() string
	// Read takes one reading and returns it as a sample stamped with the
	// time t and the boot id bootID.
	Read(ctx context.Context, t time.Time, bootID string) (*clocks.Sample, error)
	// Close releases what the backend holds.
	Close() error
}

// BootIDPath is where Linux publishes the id of the running boot.
const BootIDPath = "/proc/sys/kernel/random/boot_id"

// Errors that stop a sampler before it starts because of its inputs; a
// command reports them as usage errors.
var (
	// ErrExists says the stream or record of the prefix is already there:
	// a sampler never appends to evidence it did not start.
	ErrExists = errors.New("already exists")
	// ErrNoProcess says the --pid process is not running.
	ErrNoProcess = errors.New("no such process")
	// ErrBootID says the boot id cannot be read.
	ErrBootID = errors.New("cannot read the boot id")
	// ErrConfig says the configuration is unusable.
	ErrConfig = errors.New("invalid sampler configuration")
)

// ErrNoSamples says the sampler stopped before its first sample, so there is
// no record to write.
var ErrNoSamples = errors.New("no sample taken")

// Config configures one recording.
type Config struct {
	// Prefix names the outputs: Prefix.samples.jsonl and Prefix.summary.json.
	// Missing parent directories are created.
	Prefix string
	// Interval is the time between readings.
	Interval time.Duration
	// MaxDuration bounds the recording; reaching it stops the sampler with
	// stop reason max-duration. Zero means clocks.DefaultMaxDuration.
	MaxDuration time.Duration
	// PID, when not zero, is a process whose end stops the sampler with stop
	// reason pid-exit.
	PID int
	// BootIDFile is read for the boot id; "" means BootIDPath.
	BootIDFile string
	// Logf, when not nil, receives status lines (no trailing newline).
	Logf func(format string, args ...any)
}

// StreamPath returns the path of the sample stream for prefix.
func StreamPath(prefix string) string { return prefix + ".samples.jsonl" }

// RecordPath returns the path of the clock record for prefix.
func RecordPath(prefix string) string { return prefix + ".summary.json" }

// Result says what a recording did.
type Result struct {
	// StopReason is one of clocks.StopPIDExit, StopCommandExit, StopSignal,
	// StopMaxDuration; "" after a refusal.
	StopReason string
	// Samples is the number of lines written to the stream; Busy and Idle
	// split it.
	Samples, Busy, Idle int
	// StreamPath is the stream written ("" when no sample was taken: the
	// empty stream is removed).
	StreamPath string
	// Record is the record written to RecordPath, nil when none was.
	Record     *clocks.Record
	RecordPath string
}

// Sampler is one recording, set up and ready to run.
type Sampler struct {
	cfg     Config
	backend Backend
	bootID  string
	proc    *process
	stream  *os.File
	paths   [2]string // stream, record
	ran     bool
}

// New sets up a recording: it refuses a prefix whose stream or record
// already exists (ErrExists), reads the boot id (ErrBootID), checks that
// cfg.PID is running (ErrNoProcess), opens the backend with open, and
// creates the stream. Nothing is left behind when it fails. The caller must
// call Run or Close.
func New(ctx context.Context, cfg Config, open func(context.Context) (Backend, error)) (*Sampler, error) {
	if cfg.MaxDuration == 0 {
		cfg.MaxDuration = clocks.DefaultMaxDuration
	}
	switch {
	case cfg.Prefix == "":
		return nil, fmt.Errorf("%w: no output prefix", ErrConfig)
	case cfg.Interval <= 0:
		return nil, fmt.Errorf("%w: interval %v is not positive", ErrConfig, cfg.Interval)
	case cfg.MaxDuration < 0:
		return nil, fmt.Errorf("%w: max duration %v is negative", ErrConfig, cfg.MaxDuration)
	case cfg.PID < 0:
		return nil, fmt.Errorf("%w: pid %d is negative", ErrConfig, cfg.PID)
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	s := &Sampler{cfg: cfg, paths: [2]string{StreamPath(cfg.Prefix), RecordPath(cfg.Prefix)}}
	for _, p := range s.paths {
		if _, err := os.Lstat(p); err == nil {
			return nil, existsErr(p)
		}
	}
	bootFile := cfg.BootIDFile
	if bootFile == "" {
		bootFile = BootIDPath
	}
	id, err := ReadBootID(bootFile)
	if err != nil {
		return nil, err
	}
	s.bootID = id
	if cfg.PID != 0 {
		if s.proc, err = watchProcess(cfg.PID); err != nil {
			return nil, err
		}
	}
	if s.backend, err = open(ctx); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(s.paths[0]), 0o755); err != nil {
		s.backend.Close()
		return nil, err
	}
	f, err := os.OpenFile(s.paths[0], os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		s.backend.Close()
		if errors.Is(err, fs.ErrExist) {
			return nil, existsErr(s.paths[0])
		}
		return nil, err
	}
	s.stream = f
	return s, nil
}

func existsErr(path string) error {
	return fmt.Errorf("%s: %w; a sampler never adds to evidence it did not start (choose another --out)", path, ErrExists)
}

// ReadBootID reads the boot id from path (BootIDPath on Linux).
func ReadBootID(path string) (string, error) {
	// /proc files are regular; a FIFO or device is refused unread.
	f, err := clocks.OpenRegular(path)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBootID, err)
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, err := f.Read(buf)
	if err != nil && n == 0 {
		return "", fmt.Errorf("%w: %s: %v", ErrBootID, path, err)
	}
	id := strings.TrimSpace(string(buf[:n]))
	if id == "" || strings.ContainsAny(id, " \t\n\"\\") {
		return "", fmt.Errorf("%w: %s holds %q, not a boot id", ErrBootID, path, id)
	}
	return id, nil
}

// BootID returns the boot id the samples carry.
func (s *Sampler) BootID() string { return s.bootID }

// Close abandons a sampler that has not run: it closes the backend and
// removes the empty stream.
func (s *Sampler) Close() error {
	if s.ran {
		return nil
	}
	s.ran = true
	err := s.backend.Close()
	s.stream.Close()
	os.Remove(s.paths[0])
	return err
}

// Run samples until a stop: a reason received on stop (clocks.StopSignal,
// clocks.StopCommandExit), the end of cfg.PID (clocks.StopPIDExit), or
// cfg.MaxDuration (clocks.StopMaxDuration). The end of ctx stops it as a
// signal would. The first sample is taken at once, then one every interval;
// a reading cut short by the stop is discarded. At the stop it writes the
// record with clocks.Fold. A refused reading stops it with an error and no
// record; so does a stop before the first sample (ErrNoSamples), which also
// removes the empty stream.
func (s *Sampler) Run(ctx context.Context, stop <-chan string) (*Result, error) {
	if s.ran {
		return nil, errors.New("sampler: Run called twice")
	}
	s.ran = true
	defer s.backend.Close()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	reason := ""
	halt := func(r string) {
		mu.Lock()
		if reason == "" {
			reason = r
		}
		mu.Unlock()
		cancel()
	}
	stopped := func() string {
		mu.Lock()
		defer mu.Unlock()
		if reason == "" && ctx.Err() != nil {
			reason = clocks.StopSignal
		}
		return reason
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case r := <-stop:
			halt(r)
		case <-ctx.Done():
			halt(clocks.StopSignal)
		case <-done:
		}
	}()
	timer := time.AfterFunc(s.cfg.MaxDuration, func() { halt(clocks.StopMaxDuration) })
	defer timer.Stop()

	bound := fmt.Sprintf("until stopped or %v", s.cfg.MaxDuration)
	if s.proc != nil {
		bound = fmt.Sprintf("until pid %d exits, a signal, or %v", s.cfg.PID, s.cfg.MaxDuration)
	}
	s.cfg.Logf("sampling %s every %v %s into %s", s.backend.Name(), s.cfg.Interval, bound, s.paths[0])

	res := &Result{StreamPath: s.paths[0]}
	fold := clocks.NewFold()
	ticker := time.NewTicker(s.cfg.Interval)
	defer ticker.Stop()
	var line []byte
	for stopped() == "" {
		if s.proc != nil && !s.proc.alive() {
			halt(clocks.StopPIDExit)
			break
		}
		smp, err := s.backend.Read(runCtx, time.Now(), s.bootID)
		if err != nil {
			if stopped() != "" {
				break // the stop cut this reading short; it is not a sample
			}
			return s.refuse(res, fold, err)
		}
		line = append(smp.AppendJSON(line[:0]), '\n')
		// What is written must read back as a valid stream line.
		back, err := clocks.ParseSample(line[:len(line)-1])
		if err != nil {
			return s.refuse(res, fold, fmt.Errorf("%s gave a sample that is not valid: %v", s.backend.Name(), err))
		}
		if _, err := s.stream.Write(line); err != nil {
			return s.refuse(res, fold, err)
		}
		fold.Add(back, fold.Total+1)
		select {
		case <-runCtx.Done():
		case <-ticker.C:
		}
	}
	res.StopReason = stopped()
	res.Samples, res.Idle, res.Busy = fold.Total, fold.Idle, fold.Total-fold.Idle
	if fold.Total == 0 {
		s.stream.Close()
		os.Remove(s.paths[0])
		res.StreamPath = ""
		return res, fmt.Errorf("%w: stopped (%s) before the first sample; no record written", ErrNoSamples, res.StopReason)
	}
	if err := s.stream.Sync(); err != nil {
		s.stream.Close()
		return res, fmt.Errorf("%s: %v", s.paths[0], err)
	}
	if err := s.stream.Close(); err != nil {
		return res, fmt.Errorf("%s: %v", s.paths[0], err)
	}
	rec, err := fold.Record(s.cfg.Interval.Seconds(), res.StopReason)
	if err != nil {
		return res, err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return res, err
	}
	if err := atomicfile.WriteFile(s.paths[1], append(data, '\n'), 0o644); err != nil {
		return res, err
	}
	res.Record, res.RecordPath = rec, s.paths[1]
	s.cfg.Logf("stopped (%s) after %d samples (%d busy, %d idle); wrote %s", res.StopReason, res.Samples, res.Busy, res.Idle, s.paths[1])
	if res.StopReason == clocks.StopMaxDuration {
		s.cfg.Logf("the window was cut off at --max-duration %v: the record is partial and its leg will not be established", s.cfg.MaxDuration)
	}
	return res, nil
}

// refuse ends a run whose reading was refused: no record is written, the
// stream keeps the whole samples taken so far.
func (s *Sampler) refuse(res *Result, fold *clocks.Fold, why error) (*Result, error) {
	s.stream.Close()
	res.Samples, res.Idle, res.Busy = fold.Total, fold.Idle, fold.Total-fold.Idle
	if fold.Total == 0 {
		os.Remove(s.paths[0])
		res.StreamPath = ""
		return res, fmt.Errorf("refusing to sample: %w; no sample taken, no record written", why)
	}
	return res, fmt.Errorf("refusing to sample: %w; no record written (%s keeps its %d samples)", why, s.paths[0], fold.Total)
}
