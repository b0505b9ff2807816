// Package sampler records the GPU clock state of one benchmark leg. It reads
// the leg's GPUs (one, or several for a tensor-parallel leg: Selection) at a
// fixed interval through a Backend (nvidia-smi or NVML), one query per
// reading for all of them, appends the reading's samples to
// PREFIX.samples.jsonl as whole lines, one per GPU, as soon as they are
// taken, and when it stops writes the record the stream folds to,
// PREFIX.summary.json, atomically.
//
// A sampler only reads GPU state; nothing here changes it (no clock locks,
// no applications clocks, no persistence mode, no reset). Any reading that
// cannot be taken whole is a refusal: the sampler stops, says why, writes
// the record with stop_reason refused and the refusal quoted, and it never
// writes a default in place of a value.
package sampler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clockgate/clockgate/atomicfile"
	"github.com/clockgate/clockgate/clocks"
)

// Backend reads the clock state of the GPUs a leg samples, all of them in
// one query per reading. Every error from Read is a refusal to sample.
type Backend interface {
	// Name says which backend reads which GPUs, and how, for status lines.
	Name() string
	// Read takes one reading of every GPU and returns one sample per GPU,
	// sorted by index, each stamped with the time t and the boot id bootID.
	Read(ctx context.Context, t time.Time, bootID string) ([]*clocks.Sample, error)
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

// ErrRefused says the sampler refused a reading, or the stream it writes,
// and stopped. The record, when there was a sample to write one from, says
// stop_reason refused and quotes the refusal.
var ErrRefused = errors.New("refusing to sample")

const (
	// MinInterval is the shortest --interval: ten readings a second.
	// nvidia-smi forks a process per reading and takes tens to hundreds of
	// milliseconds to answer, so a shorter interval measures its own
	// latency and loads the box being measured; and utilization.gpu, which
	// tells busy samples from idle ones, is itself averaged by the driver
	// over a sample period of 1/6 s to 1 s, so faster readings repeat its
	// last average rather than observe anything new.
	MinInterval = 100 * time.Millisecond

	// NameMax is the longest file name, in bytes, the sampler writes: Linux's
	// NAME_MAX, the limit of ext4, xfs, btrfs and tmpfs. The record's
	// temporary name is the longest, so a prefix is checked against it
	// before sampling starts, not found too long when the leg is over.
	NameMax = 255
)

// Config configures one recording.
type Config struct {
	// Prefix names the outputs: Prefix.samples.jsonl and Prefix.summary.json.
	// Missing parent directories are created. It must not end in a path
	// separator, and its last element must leave room for the record's
	// temporary name within NameMax.
	Prefix string
	// Interval is the time between readings, at least MinInterval.
	Interval time.Duration
	// MaxDuration bounds the recording; reaching it stops the sampler with
	// stop reason max-duration. Zero means clocks.DefaultMaxDuration.
	MaxDuration time.Duration
	// PID, when not zero, is a process whose end stops the sampler with stop
	// reason pid-exit, within MaxPIDExitLatency.
	PID int
	// BootIDFile is read for the boot id; "" means BootIDPath.
	BootIDFile string
	// EnginePIDs name the engine under test's processes (--engine-pid),
	// and EnginePorts the TCP ports its server listens on (--engine-port),
	// each resolved once, by New, to the process listening on it (SPEC
	// §11.1). Each engine process and its descendants are the leg's own
	// at every listing of the compute processes; a pid not running, or a
	// port without a listener a process in ProcRoot holds, is ErrEngine.
	EnginePIDs  []int
	EnginePorts []int
	// ProbeLatency, when not zero, stands for the backend's measured
	// probe reading in the interval check (for tests: a fake's latency on
	// a loaded test machine is not a GPU's).
	ProbeLatency time.Duration
	// IntervalSetting writes an interval as the user sets it, for the
	// interval check's message; nil is the flag, "--interval 250ms" (the
	// grid names its plan's key).
	IntervalSetting func(time.Duration) string
	// MemoryOut names the memory record's file (SPEC §2.2); "" means
	// MemoryPath(Prefix) where Prefix is TREE/clocks/<model>/<engine>/r<N>,
	// and no memory record elsewhere. An existing file is ErrExists.
	MemoryOut string
	// ProcRoot is where /proc is read (engine ports, the owners of the
	// compute processes, host RSS); "" means /proc.
	ProcRoot string
	// Expect is the leg's declared state (--expect), written into the
	// record for the judge to prove against the stream; nil for none.
	Expect *clocks.Expect
	// HostRoot is the root under which the host stream reads /proc and
	// /sys (SPEC §12.2); "" means $CLOCKGATE_HOST_ROOT (HostRootEnv), or
	// "/", the running machine, where that is unset. Where the host cannot
	// be read there (not Linux), the leg has no host stream.
	HostRoot string
	// Logf, when not nil, receives status lines (no trailing newline).
	Logf func(format string, args ...any)
	// Leg says the stream is one host's of a multi-host leg (SPEC §12.3):
	// each sample carries mono_s, and the record time_sync, read by
	// TimeSync at the window's start and end (nil is ReadTimeSync).
	Leg      bool
	TimeSync func(context.Context) *clocks.TimeSync
}

// StreamPath returns the path of the sample stream for prefix.
func StreamPath(prefix string) string { return prefix + ".samples.jsonl" }

// RecordPath returns the path of the clock record for prefix.
func RecordPath(prefix string) string { return prefix + ".summary.json" }

// Result says what a recording did.
type Result struct {
	// StopReason is one of clocks.StopPIDExit, StopCommandExit, StopSignal,
	// StopMaxDuration, or StopRefused after a refusal.
	StopReason string
	// Refusal is why the sampler refused, when it did.
	Refusal string
	// Stopped is when the stop was noticed (the zero time after a refusal
	// that was not a stop).
	Stopped time.Time
	// Samples is the number of lines written to the stream; Busy and Idle
	// split it.
	Samples, Busy, Idle int
	// Ticks is the number of readings written: each is one line per GPU.
	Ticks int
	// GPUs are the indices of the GPUs sampled, sorted (nil when no
	// reading was taken).
	GPUs []int
	// StreamPath is the stream written ("" when no sample was taken: the
	// empty stream is removed).
	StreamPath string
	// Record is the record written to RecordPath, nil when none was.
	Record     *clocks.Record
	RecordPath string
	// Memory is the memory record written to MemoryPath, nil when none
	// was (MemoryErr says why, where one was asked for).
	Memory     *MemoryRecord
	MemoryPath string
	MemoryErr  error
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

	// id is the stream's file as created; a stream whose path names
	// another file, or whose link count changed, is no longer the leg's.
	id    os.FileInfo
	nlink uint64
	// written counts the bytes of whole lines in the stream.
	written int64
	// gpus are the GPUs of the window's first reading; every reading must
	// give the same.
	gpus []int
	// write appends to the stream (a test replaces it to fail a write).
	write func([]byte) (int, error)
	// procRoot is where the sampler reads /proc (a test points it
	// elsewhere).
	procRoot string
	// engines are the engine's processes, as named (SPEC §11.1).
	engines []clocks.Engine
	// syncStart is the time synchronisation read at the window's start
	// (a multi-host leg's).
	syncStart *clocks.TimeSync
	// commandPID is the recorded command's pid (SetCommand), 0 for none.
	commandPID int
	// memPath is where the memory record goes, "" for nowhere; mem
	// folds the readings into it, and rss reads the host RSS of the leg's
	// own processes (nil where it names none).
	memPath string
	mem     MemoryPeaks
	rss     *rssReader
	// host writes the host stream beside the GPU stream, nil for none.
	host *hostStream
}

// checkConfig refuses what cannot give a valid leg, before anything starts.
func checkConfig(cfg Config) error {
	switch {
	case cfg.Prefix == "":
		return fmt.Errorf("%w: no output prefix", ErrConfig)
	case strings.HasSuffix(cfg.Prefix, string(os.PathSeparator)) || strings.HasSuffix(cfg.Prefix, "/"):
		return fmt.Errorf("%w: output prefix %q ends in a path separator: the prefix names files, not a directory (for DIR/r1.samples.jsonl write DIR/r1)", ErrConfig, cfg.Prefix)
	case cfg.Interval < MinInterval:
		return fmt.Errorf("%w: interval %v is shorter than %v, the floor: nvidia-smi takes tens to hundreds of ms per reading and utilization.gpu is averaged over 1/6 s to 1 s", ErrConfig, cfg.Interval, MinInterval)
	case cfg.MaxDuration < 0:
		return fmt.Errorf("%w: max duration %v is negative", ErrConfig, cfg.MaxDuration)
	case cfg.PID < 0:
		return fmt.Errorf("%w: pid %d is negative", ErrConfig, cfg.PID)
	}
	for _, p := range cfg.EnginePorts {
		if p <= 0 || p > MaxPort {
			return fmt.Errorf("%w: --engine-port %d: want a TCP port, 1 to %d", ErrConfig, p, MaxPort)
		}
	}
	for _, p := range cfg.EnginePIDs {
		if p <= 0 {
			return fmt.Errorf("%w: --engine-pid %d: want a process id > 0", ErrConfig, p)
		}
	}
	base := filepath.Base(cfg.Prefix)
	if base == "." || base == ".." {
		return fmt.Errorf("%w: output prefix %q names a directory, not files (for DIR/r1.samples.jsonl write DIR/r1)", ErrConfig, cfg.Prefix)
	}
	longest := filepath.Base(RecordPath(cfg.Prefix))
	if n := len(longest) + atomicfile.TempOverhead; n > NameMax {
		return fmt.Errorf("%w: output prefix name %q is %d bytes: the record's temporary file (%s plus up to %d bytes) would be %d bytes, over the %d-byte file name limit; use a name of at most %d bytes",
			ErrConfig, base, len(base), longest, atomicfile.TempOverhead, n, NameMax, NameMax-(n-len(base)))
	}
	return CheckTreePrefix(cfg.Prefix)
}

// New sets up a recording: it refuses a configuration that cannot give a
// valid leg (ErrConfig), a prefix whose stream or record already exists
// (ErrExists), reads the boot id (ErrBootID), checks that cfg.PID is
// running (ErrNoProcess), opens the backend with open, and creates the
// stream. Nothing is left behind when it fails. The caller must call Run or
// Close.
func New(ctx context.Context, cfg Config, open func(context.Context) (Backend, error)) (*Sampler, error) {
	if cfg.MaxDuration == 0 {
		cfg.MaxDuration = clocks.DefaultMaxDuration
	}
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	s := &Sampler{cfg: cfg, paths: [2]string{StreamPath(cfg.Prefix), RecordPath(cfg.Prefix)}, procRoot: cfg.ProcRoot}
	s.memPath = cfg.MemoryOut
	if s.memPath == "" {
		s.memPath, _ = MemoryPath(cfg.Prefix)
	}
	for _, p := range append(s.paths[:], s.memPath) {
		if _, err := os.Lstat(p); p != "" && err == nil {
			return nil, existsErr(p)
		}
	}
	if p := clocks.HostStreamPath(s.paths[0]); exists(p) {
		return nil, existsErr(p)
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
	if s.engines, err = ResolveEngines(s.procRoot, cfg.EnginePIDs, cfg.EnginePorts); err != nil {
		return nil, err
	}
	for _, e := range s.engines {
		cfg.Logf("engine under test: pid %d (%s), its descendants the leg's own", e.PID, engineWhat(e))
	}
	if s.backend, err = open(ctx); err != nil {
		return nil, err
	}
	if err := s.checkHold(ctx); err != nil {
		s.backend.Close()
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
	st, err := f.Stat()
	if err != nil {
		f.Close()
		os.Remove(s.paths[0])
		s.backend.Close()
		return nil, err
	}
	s.stream, s.id, s.nlink, s.write = f, st, linkCount(st), f.Write
	return s, nil
}

// exists says a file (or a link) is at p.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// linkCount is a file's number of hard links, 1 where the system does not
// say.
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// checkStream verifies that the stream is still the file this sampler
// created, at its path: a stream deleted, moved away or replaced while
// being written is no longer the leg's evidence.
func (s *Sampler) checkStream() error {
	path := s.paths[0]
	st, err := s.stream.Stat()
	if err != nil {
		return fmt.Errorf("%s: cannot stat the open stream: %v", path, err)
	}
	if n := linkCount(st); n != s.nlink {
		if n == 0 {
			return fmt.Errorf("%s was deleted while being written (its link count fell from %d to 0)", path, s.nlink)
		}
		return fmt.Errorf("%s changed while being written: its link count went from %d to %d", path, s.nlink, n)
	}
	at, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is gone: it was moved away while being written", path)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if !os.SameFile(at, s.id) {
		return fmt.Errorf("%s was replaced while being written: the path names another file now", path)
	}
	return nil
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

// HoldFactor is how many times the slowest reading at the probe an
// --interval must be: a reading that takes longer than clocks.MaxGapIntervals
// intervals is a gap that voids the leg (clock.coverage), so an interval
// shorter than this is refused before anything runs, not found too short
// when the leg is over.
const HoldFactor = 3

// ProbeTimer is a backend that measured its reading at the probe.
type ProbeTimer interface {
	// ProbeLatency is how long the probe's reading took.
	ProbeLatency() time.Duration
}

// HoldReadings is how many readings the interval check times at most:
// the probe's, then, while the fastest so far is too slow for the
// interval, up to two more. The fastest stands for the sampler's reading:
// one reading slowed by a loaded machine is not what the sampler can
// hold, and three slow ones in a row are.
const HoldReadings = 3

// checkHold refuses (ErrConfig) an interval shorter than HoldFactor times
// the fastest of up to HoldReadings timed readings, naming the interval
// the sampler can hold.
func (s *Sampler) checkHold(ctx context.Context) error {
	lat, n := s.cfg.ProbeLatency, 1
	pt, measured := s.backend.(ProbeTimer)
	if lat != 0 || !measured {
		measured = false
	} else {
		lat = pt.ProbeLatency()
	}
	if lat <= 0 || s.cfg.Interval >= HoldFactor*lat {
		return nil
	}
	var readErr error
	for measured && n < HoldReadings && s.cfg.Interval < HoldFactor*lat {
		began := time.Now()
		if _, readErr = s.backend.Read(ctx, began, s.bootID); readErr != nil {
			if err := ctx.Err(); err != nil {
				return err // stopped while starting, not a refusal
			}
			break
		}
		lat, n = min(lat, time.Since(began)), n+1
	}
	if s.cfg.Interval >= HoldFactor*lat {
		return nil
	}
	hold := (HoldFactor*lat + 10*time.Millisecond - 1).Truncate(10 * time.Millisecond)
	setting := s.cfg.IntervalSetting
	if setting == nil {
		setting = func(d time.Duration) string { return "--interval " + d.String() }
	}
	took := "the time one reading took at the probe"
	if n > 1 {
		took = fmt.Sprintf("the fastest of %d readings timed at the start", n)
	}
	if readErr != nil {
		took += fmt.Sprintf(" (the reading after it failed: %v)", readErr)
	}
	return fmt.Errorf("%w: %s is shorter than %d × %.3f s, %s: this sampler cannot hold it on this box (a reading over %d intervals is a gap that voids the leg, clock.coverage); use %s or more (reading %s)",
		ErrConfig, setting(s.cfg.Interval), HoldFactor, lat.Seconds(), took, clocks.MaxGapIntervals, setting(hold), s.backend.Name())
}

// engineWhat says how an engine process was named, for status lines.
func engineWhat(e clocks.Engine) string {
	if port, ok := strings.CutPrefix(e.How, clocks.EnginePortPrefix); ok {
		return "listening on --engine-port " + port
	}
	return "--engine-pid"
}

// Engines returns the engine's processes, as named and resolved by New.
func (s *Sampler) Engines() []clocks.Engine { return append([]clocks.Engine(nil), s.engines...) }

// SetCommand names the recorded command's process, started after New and
// before Run: its tree's host RSS is the leg's (the compute processes' own
// set already holds it, as the sampler's child).
func (s *Sampler) SetCommand(pid int) { s.commandPID = pid }

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
// clocks.StopCommandExit), the end of cfg.PID (clocks.StopPIDExit, noticed
// within MaxPIDExitLatency whatever the interval), or cfg.MaxDuration
// (clocks.StopMaxDuration). The end of ctx stops it as a signal would. The
// first sample is taken at once, then one every interval; a reading slower
// than the interval delays the next, and the gap shows in the stream.
//
// The end of the window is held to the coverage rule: the time from the
// last sample to the stop, like the gap between two samples, must be at
// most clocks.MaxGapIntervals intervals. A stop within that bound kills
// the reading in flight, which is not a sample. A stop past it lets the
// reading in flight finish (see settle), when that can bring the last
// sample within the bound: the reading started before the stop, so its
// sample belongs to the window, as every sample's time is the start of
// its reading. Otherwise, or when that reading does not answer, the end of
// the window was not observed, and that is a refusal naming the reading.
//
// At the stop it writes the record with clocks.Fold, never replacing a
// file. A refusal (a reading refused or timed out, a failed write, a stream
// deleted or replaced, an unobserved end) stops it with an error wrapping
// ErrRefused: a failed write is first cut back to the stream's last whole
// line, and the record is written with stop_reason refused and the refusal
// quoted. A stop or refusal before the first sample writes no record
// (ErrNoSamples, or ErrRefused) and removes the empty stream.
func (s *Sampler) Run(ctx context.Context, stop <-chan string) (*Result, error) {
	if s.ran {
		return nil, errors.New("sampler: Run called twice")
	}
	s.ran = true
	defer s.backend.Close()
	defer func() {
		// A run that ends without its memory record ends its RSS reader.
		if s.rss != nil {
			s.rss.stop()
		}
	}()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Readings run under a context of their own, which only settle ends
	// (or the backend's own timeout): whether a stop kills the reading in
	// flight depends on when the last sample was taken.
	readParent := context.WithoutCancel(ctx)
	bound := time.Duration(clocks.MaxGapIntervals) * s.cfg.Interval
	var mu sync.Mutex
	reason := ""
	var stopAt, lastT time.Time // lastT: the last sample's time
	var cur *reading            // the reading in flight, nil between readings
	setStop := func(r string) {
		if reason == "" {
			reason, stopAt = r, time.Now()
			if cur != nil {
				cur.settle(stopAt, lastT, bound)
			}
		}
	}
	halt := func(r string) {
		mu.Lock()
		setStop(r)
		mu.Unlock()
		cancel()
	}
	stopped := func() string {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			setStop(clocks.StopSignal)
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
	if s.proc != nil {
		s.proc.watch(done, func() { halt(clocks.StopPIDExit) })
	}
	timer := time.AfterFunc(s.cfg.MaxDuration, func() { halt(clocks.StopMaxDuration) })
	defer timer.Stop()

	until := fmt.Sprintf("until stopped or %v", s.cfg.MaxDuration)
	if s.proc != nil {
		until = fmt.Sprintf("until pid %d exits, a signal, or %v", s.cfg.PID, s.cfg.MaxDuration)
	}
	s.cfg.Logf("sampling %s every %v %s into %s", s.backend.Name(), s.cfg.Interval, until, s.paths[0])
	if s.cfg.Leg {
		s.syncStart = s.readTimeSync(readParent)
	}

	res := &Result{StreamPath: s.paths[0]}
	s.host = s.startHost()
	defer s.host.stop()
	fold := clocks.NewFold()
	ticker := time.NewTicker(s.cfg.Interval)
	defer ticker.Stop()
	var line []byte
	var backs []*clocks.Sample
	var killed *reading // the reading a stop killed, if one did
	// firstProcs receives the compute processes listed after the first
	// reading (SPEC §10.1, another tenant), listed beside the readings.
	var firstProcs <-chan tenantListing
	for stopped() == "" {
		if s.proc != nil && !s.proc.alive() {
			halt(clocks.StopPIDExit)
			break
		}
		if err := s.checkStream(); err != nil {
			return s.refuse(res, fold, err, false)
		}
		rctx, rcancel := context.WithCancel(readParent)
		mu.Lock()
		if reason != "" {
			// The stop came since the loop looked: no reading is in
			// flight for it to settle, so none is started.
			mu.Unlock()
			rcancel()
			break
		}
		t := time.Now()
		mono, monoOK := s.mono()
		r := &reading{mu: &mu, start: t, cancel: rcancel}
		cur = r
		mu.Unlock()
		rows, err := s.backend.Read(rctx, t, s.bootID)
		mu.Lock()
		cur = nil
		r.release()
		wasKilled := !r.killed.IsZero()
		mu.Unlock()
		if err != nil {
			if wasKilled && errors.Is(err, context.Canceled) {
				killed = r // the stop cut this reading short; it is not a sample
				break
			}
			if errors.Is(err, errCallSignaled) && s.stopFollows(runCtx, lastT, bound) {
				// A stop sent to the whole process group reached the
				// call too (SPEC §12.3): the reading it cut short is
				// dropped, and the window ends at the last whole one.
				killed = r
				break
			}
			return s.refuse(res, fold, err, true)
		}
		if err := s.checkTick(rows); err != nil {
			return s.refuse(res, fold, err, true)
		}
		if s.cfg.Leg {
			if !monoOK {
				return s.refuse(res, fold, errors.New("CLOCK_BOOTTIME cannot be read: a multi-host leg's samples carry mono_s"), true)
			}
			for _, smp := range rows {
				smp.MonoS = &mono
			}
		}
		line, backs = line[:0], backs[:0]
		for _, smp := range rows {
			start := len(line)
			line = smp.AppendJSON(line)
			// What is written must read back as a valid stream line.
			back, err := clocks.ParseSample(line[start:])
			if err != nil {
				what := "a sample"
				if len(rows) > 1 {
					what = fmt.Sprintf("a sample of GPU %d", smp.GPUIndex)
				}
				return s.refuse(res, fold, fmt.Errorf("%s gave %s that is not valid: %v", s.backend.Name(), what, err), true)
			}
			line = append(line, '\n')
			backs = append(backs, back)
		}
		// The tick's rows go to the stream in one write: a stream never
		// holds part of a tick.
		if err := s.append(line, fold.Total, len(rows)); err != nil {
			return s.refuse(res, fold, err, true)
		}
		busy := true
		for _, back := range backs {
			fold.Add(back, fold.Total+1)
			busy = busy && back.UtilizationGPUPct != 0
		}
		s.host.read(rows[0].T, busy, s.cfg.Logf)
		s.addMemory(rows)
		res.Ticks++
		if res.Ticks == 1 {
			uuids := map[string]bool{}
			for _, smp := range rows {
				uuids[smp.GPUUUID] = true
			}
			firstProcs = s.listTenantsBounded(readParent, uuids, nil)
		}
		mu.Lock()
		lastT = t
		mu.Unlock()
		select {
		case <-runCtx.Done():
		case <-ticker.C:
		}
	}
	res.StopReason, res.Stopped = stopped(), stopAt
	res.Samples, res.Idle, res.Busy, res.GPUs = fold.Total, fold.Idle(), fold.Total-fold.Idle(), s.gpus
	if fold.Total == 0 {
		s.stream.Close()
		os.Remove(s.paths[0])
		res.StreamPath = ""
		return res, fmt.Errorf("%w: stopped (%s) before the first sample; no record written", ErrNoSamples, res.StopReason)
	}
	if err := s.checkStream(); err != nil {
		return s.refuse(res, fold, err, false)
	}
	if err := s.tail(res.StopReason, stopAt, lastT, killed); err != nil {
		return s.refuse(res, fold, err, true)
	}
	if err := s.stream.Sync(); err != nil {
		return s.refuse(res, fold, fmt.Errorf("%s: %v", s.paths[0], err), true)
	}
	if err := s.stream.Close(); err != nil {
		return res, fmt.Errorf("%s: %v", s.paths[0], err)
	}
	rec, err := fold.Record(s.cfg.Interval.Seconds(), res.StopReason)
	if err != nil {
		return res, err
	}
	rec.Host = s.host.finish(s.cfg.Logf)
	if firstProcs != nil {
		rec.ComputeProcesses = s.tenants(readParent, <-firstProcs)
	}
	if err := s.writeRecord(rec); err != nil {
		return res, err
	}
	res.Record, res.RecordPath = rec, s.paths[1]
	s.writeMemory(res)
	s.cfg.Logf("stopped (%s) after %s(%d busy, %d idle); wrote %s", res.StopReason, s.count(res), res.Busy, res.Idle, s.paths[1])
	if res.StopReason == clocks.StopMaxDuration {
		s.cfg.Logf("the window was cut off at --max-duration %v: the record is partial and its leg will not be established", s.cfg.MaxDuration)
	}
	return res, nil
}

// stopFollows waits for the stop of a call that a stop signal ended: until
// the coverage bound after the last sample (when the window's end is still
// covered by it), at least signalledCallGrace. It says whether the stop
// came (runCtx ended); a signal without a stop is a refusal.
func (s *Sampler) stopFollows(runCtx context.Context, lastT time.Time, bound time.Duration) bool {
	wait := signalledCallGrace
	if !lastT.IsZero() {
		wait = max(wait, time.Until(lastT.Add(bound)))
	}
	select {
	case <-runCtx.Done():
		return true
	case <-time.After(wait):
		return false
	}
}

// signalledCallGrace is the least time a call ended by a stop signal waits
// for the sampler's own stop: one signal reaches both within milliseconds,
// and record's stop comes when its command has exited.
const signalledCallGrace = time.Second

// addMemory folds one reading into the memory record, and asks the host
// RSS reader for the leg's own processes' RSS now. That reader runs beside
// the readings (a walk of /proc takes milliseconds to tens of them on a
// loaded box, which the interval must not pay): a reading that comes while
// it still reads the one before is read once it is done.
func (s *Sampler) addMemory(rows []*clocks.Sample) {
	if s.memPath == "" {
		return
	}
	if s.mem.N() == 0 {
		if h := NewHostRSS(s.procRoot, s.rssRoots()...); h != nil {
			s.rss = startRSSReader(h)
		}
	}
	s.mem.Add(rows, nil)
	if s.rss != nil {
		s.rss.kick()
	}
}

// rssReader reads the host RSS of the leg's own processes when kicked, in
// a goroutine of its own, keeping the largest.
type rssReader struct {
	h     *HostRSS
	kicks chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	peak  float64
	reads int
}

func startRSSReader(h *HostRSS) *rssReader {
	r := &rssReader{h: h, kicks: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for range r.kicks {
			mib, _ := r.h.Read()
			r.mu.Lock()
			r.peak = max(r.peak, mib)
			r.reads++
			r.mu.Unlock()
		}
	}()
	return r
}

// kick asks for a read; one asked for while another is under way waits
// for it, and a third is the same read as the second.
func (r *rssReader) kick() {
	select {
	case r.kicks <- struct{}{}:
	default:
	}
}

// stop ends the reader once the read asked for last is done (within
// tenantWait) and returns the largest RSS read, and how many reads.
func (r *rssReader) stop() (float64, int) {
	close(r.kicks)
	select {
	case <-r.done:
	case <-time.After(tenantWait):
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak, r.reads
}

// rssRoots are the roots of the leg's own processes whose host RSS is the
// leg's: the --pid process, the recorded command and the engine's
// processes (never the sampler itself).
func (s *Sampler) rssRoots() []int {
	roots := []int{s.cfg.PID, s.commandPID}
	for _, e := range s.engines {
		roots = append(roots, e.PID)
	}
	return roots
}

// writeMemory writes the memory record where one is asked for, saying so,
// or why there is none: the leg is then memory.missing.
func (s *Sampler) writeMemory(res *Result) {
	if s.memPath == "" {
		return
	}
	if s.rss != nil {
		if peak, reads := s.rss.stop(); reads > 0 {
			s.mem.AddHostRSS(peak)
		}
		s.rss = nil
	}
	rec, err := s.mem.Record()
	if err == nil {
		err = WriteMemoryRecord(s.memPath, rec)
		if errors.Is(err, atomicfile.ErrExists) {
			err = fmt.Errorf("%s appeared while sampling; it was not replaced", s.memPath)
		}
	}
	if err != nil {
		res.MemoryErr = err
		s.cfg.Logf("no memory record written to %s: %v; the leg will be memory.missing", s.memPath, err)
		return
	}
	res.Memory, res.MemoryPath = rec, s.memPath
	rss := "no process of the leg's own named, so no host RSS"
	if rec.PeakHostRSSMiB != nil {
		rss = fmt.Sprintf("peak host RSS %s MiB", strconv.FormatFloat(*rec.PeakHostRSSMiB, 'f', -1, 64))
	}
	s.cfg.Logf("wrote %s: peak GPU memory %s MiB, %s, %d readings", s.memPath, strconv.FormatFloat(rec.PeakGPUMemoryMiB, 'f', -1, 64), rss, rec.N)
}

// reading is one reading in flight, as a stop sees it. mu, the run's
// lock, guards every field after cancel.
type reading struct {
	mu     *sync.Mutex
	start  time.Time
	cancel context.CancelFunc
	// killed is when a stop killed the reading (zero while it may still
	// answer); grace says it was let run past the stop, and timer kills it
	// at the end of its grace; returned says the reading is over.
	killed   time.Time
	grace    bool
	timer    *time.Timer
	returned bool
}

// settle decides, at a stop at stopAt, the fate of the reading in flight,
// given the last sample's time lastT (zero before the first) and the
// coverage bound. The reading is killed at once when the window's end is
// covered without it (stopAt within bound of lastT), when there is no
// window yet, or when it cannot help (it started more than bound before
// the stop). Otherwise it is let run until bound after its own start, the
// longest a reading may take before it is a coverage gap, and killed then
// if it has not answered. The caller holds the lock that guards the
// reading.
func (r *reading) settle(stopAt, lastT time.Time, bound time.Duration) {
	if lastT.IsZero() || stopAt.Sub(lastT) <= bound || stopAt.Sub(r.start) > bound {
		r.killed = stopAt
		r.cancel()
		return
	}
	r.grace = true
	end := r.start.Add(bound)
	r.timer = time.AfterFunc(time.Until(end), func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.returned {
			r.killed = end
			r.cancel()
		}
	})
}

// release stops the grace timer of a reading that returned and frees its
// context. The caller holds the lock that guards the reading.
func (r *reading) release() {
	r.returned = true
	if r.timer != nil {
		r.timer.Stop()
	}
	r.cancel()
}

// tail refuses a window whose end was not observed: the stop came more than
// clocks.MaxGapIntervals intervals after the last sample, so the window's
// last stretch, however the leg ran in it, is in no sample. The reading
// the stop killed (killed, nil when none was in flight) is named.
func (s *Sampler) tail(reason string, stopAt, lastT time.Time, killed *reading) error {
	bound := time.Duration(clocks.MaxGapIntervals) * s.cfg.Interval
	gap := stopAt.Sub(lastT)
	if gap <= bound {
		return nil
	}
	what := "no reading was taken in that time"
	switch {
	case killed != nil && killed.grace:
		what = fmt.Sprintf("the reading started at %s, %.3f s before the stop, was let run to %d × interval after its start and was still unanswered then, so it was killed",
			killed.start.UTC().Format(SampleTimeLayout), stopAt.Sub(killed.start).Seconds(), clocks.MaxGapIntervals)
	case killed != nil:
		what = fmt.Sprintf("the reading started at %s was still unanswered after %.3f s, and the stop killed it",
			killed.start.UTC().Format(SampleTimeLayout), stopAt.Sub(killed.start).Seconds())
	}
	return fmt.Errorf("the sampler stopped (%s) %.3f s after its last sample (%s), more than %d × interval %v = %v: %s; the end of the window is unobserved",
		reason, gap.Seconds(), lastT.UTC().Format(SampleTimeLayout), clocks.MaxGapIntervals, s.cfg.Interval, bound, what)
}

// append writes one tick's lines (lines of them, one per GPU) to the
// stream in one write. A write that fails or falls short is cut back to the
// last whole tick, so the stream never keeps a torn line or part of a tick.
func (s *Sampler) append(buf []byte, samples, lines int) error {
	n, err := s.write(buf)
	if err == nil && n == len(buf) {
		s.written += int64(n)
		return nil
	}
	if err == nil {
		err = io.ErrShortWrite
	}
	next := "the next line"
	if lines > 1 {
		next = fmt.Sprintf("the next tick's %d lines", lines)
	}
	if terr := s.stream.Truncate(s.written); terr != nil {
		return fmt.Errorf("writing %s failed after %d whole samples (%d of %d bytes of %s written): %v; cutting the torn line off failed too: %v",
			s.paths[0], samples, n, len(buf), next, err, terr)
	}
	return fmt.Errorf("writing %s failed after %d whole samples (%d of %d bytes of %s written): %v; the stream was cut back to its last whole line",
		s.paths[0], samples, n, len(buf), next, err)
}

// checkTick refuses a reading that is not one sample per GPU, sorted by
// index, each GPU once, all at one time, and the same GPUs as the window's
// first reading: a backend that answers otherwise would write a stream
// whose rows cannot be told apart.
func (s *Sampler) checkTick(rows []*clocks.Sample) error {
	name := s.backend.Name()
	if len(rows) == 0 {
		return fmt.Errorf("%s gave no sample", name)
	}
	got := make([]int, len(rows))
	for i, r := range rows {
		got[i] = r.GPUIndex
		if i > 0 && r.GPUIndex <= rows[i-1].GPUIndex {
			return fmt.Errorf("%s gave samples for GPUs %s: want each GPU once, sorted by index", name, JoinIndices(got[:i+1]))
		}
		if r.T != rows[0].T {
			return fmt.Errorf("%s gave GPU %d's sample at %s and GPU %d's at %s: one reading's samples share one time", name, rows[0].GPUIndex, rows[0].T, r.GPUIndex, r.T)
		}
	}
	if s.gpus == nil {
		s.gpus = got
		return nil
	}
	if JoinIndices(got) != JoinIndices(s.gpus) {
		return fmt.Errorf("%s gave samples for GPUs %s where the window samples GPUs %s", name, JoinIndices(got), JoinIndices(s.gpus))
	}
	return nil
}

// mono is CLOCK_BOOTTIME now, for a multi-host leg's samples.
func (s *Sampler) mono() (float64, bool) {
	if !s.cfg.Leg {
		return 0, false
	}
	return bootTime()
}

// readTimeSync reads the host's time synchronisation, for a multi-host
// leg's record.
func (s *Sampler) readTimeSync(ctx context.Context) *clocks.TimeSync {
	if s.cfg.TimeSync != nil {
		return s.cfg.TimeSync(ctx)
	}
	return ReadTimeSync(ctx)
}

// count says how much was sampled, for status lines: "12 samples " for
// one GPU, "12 ticks × 4 GPUs = 48 samples " for several.
func (s *Sampler) count(res *Result) string {
	if len(s.gpus) <= 1 {
		return fmt.Sprintf("%d samples ", res.Samples)
	}
	return fmt.Sprintf("%d ticks × %d GPUs = %d samples ", res.Ticks, len(s.gpus), res.Samples)
}

// writeRecord writes the record atomically, never replacing a file.
func (s *Sampler) writeRecord(rec *clocks.Record) error {
	rec.Expect = s.cfg.Expect
	if s.cfg.Leg {
		rec.TimeSync = &clocks.TimeSyncWindow{Start: s.syncStart, End: s.readTimeSync(context.Background())}
	}
	loc, zone := hostZone()
	stampZone(&rec.Window, loc, zone)
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	err = atomicfile.WriteNew(s.paths[1], append(data, '\n'), 0o644)
	if errors.Is(err, atomicfile.ErrExists) {
		return fmt.Errorf("%s appeared while sampling; it was not replaced, and this window has no record", s.paths[1])
	}
	return err
}

// refuse ends a run on a refusal: the stream keeps the whole samples taken
// so far (ours says whether the stream file is still this sampler's to
// sync or remove), and, when there is at least one, the record is written
// with stop_reason refused and the refusal quoted.
func (s *Sampler) refuse(res *Result, fold *clocks.Fold, why error, ours bool) (*Result, error) {
	if ours {
		s.stream.Sync()
	}
	s.stream.Close()
	res.StopReason, res.Refusal = clocks.StopRefused, why.Error()
	res.Samples, res.Idle, res.Busy, res.GPUs = fold.Total, fold.Idle(), fold.Total-fold.Idle(), s.gpus
	if fold.Total == 0 {
		if ours {
			os.Remove(s.paths[0])
		}
		res.StreamPath = ""
		return res, fmt.Errorf("%w: %v; no sample taken, no record written", ErrRefused, why)
	}
	rec, err := fold.Record(s.cfg.Interval.Seconds(), clocks.StopRefused)
	if err == nil {
		rec.Host = s.host.finish(s.cfg.Logf)
		rec.Refusal = why.Error()
		err = s.writeRecord(rec)
	}
	if err != nil {
		return res, fmt.Errorf("%w: %v; the record could not be written either: %v (%s keeps its %d samples)", ErrRefused, why, err, s.paths[0], fold.Total)
	}
	res.Record, res.RecordPath = rec, s.paths[1]
	s.writeMemory(res)
	s.cfg.Logf("refused after %s(%d busy, %d idle); wrote %s with stop_reason refused", s.count(res), res.Busy, res.Idle, s.paths[1])
	return res, fmt.Errorf("%w: %v; the record says stop_reason refused, and the leg will not be established", ErrRefused, why)
}
