package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/multileg"
	"github.com/clockgate/clockgate/sampler"
)

// bootIDFileEnv names the environment variable that overrides the boot id
// file, for tests.
const bootIDFileEnv = "CLOCKGATE_BOOT_ID_FILE"

// probeLatencyEnv names the environment variable that stands for the
// probe's measured reading time in the interval check, for tests (a fake
// on a loaded test machine is not a GPU).
const probeLatencyEnv = "CLOCKGATE_TEST_PROBE_LATENCY"

// recordingFlags are the flags sample and record share.
type recordingFlags struct {
	out         string
	maxDuration time.Duration
	interval    time.Duration
	gpu         string
	backend     string
	// enginePIDs and enginePorts name the engine under test (SPEC §11.1).
	enginePIDs  []int
	enginePorts []int
	// memoryOut names the memory record where PREFIX is not in a tree.
	memoryOut string
	// gpus is the selection validate read from --gpu or the environment.
	gpus sampler.Selection
	// expect are the --expect declarations, and expectation what
	// validate read from them (SPEC §12.2).
	expect      []string
	expectation *clocks.Expect
}

func (f *recordingFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.out, "out", "", "output `PREFIX`: writes PREFIX.samples.jsonl and PREFIX.summary.json (required)")
	fs.DurationVar(&f.maxDuration, "max-duration", clocks.DefaultMaxDuration, "stop after this long, recording stop_reason max-duration (a bound on an orphan, not a budget on a leg)")
	fs.DurationVar(&f.interval, "interval", time.Second, fmt.Sprintf("time between samples, at least %v", sampler.MinInterval))
	fs.StringVar(&f.gpu, "gpu", "", "GPUs to sample: an index (3), a comma list (0,1,2,3), all, or GPU UUIDs (GPU-5f3c…, or as amd-smi prints them, or a prefix naming one GPU); without it, the GPUs $CUDA_VISIBLE_DEVICES names when it is set, else GPU 0")
	fs.IntSliceVar(&f.enginePIDs, "engine-pid", nil, "the engine under test, started before the leg (a server's `PID`; repeatable, or a comma list): it and its descendants are the leg's own, never clock.foreign_process")
	fs.IntSliceVar(&f.enginePorts, "engine-port", nil, "the engine under test named by the TCP `PORT` its server listens on (repeatable): the listening process, found once at start, and its descendants are the leg's own")
	fs.StringVar(&f.memoryOut, "memory-out", "", "write the memory record (peak GPU memory used, peak host RSS of the leg's own processes) to `FILE`; without it, it is written only where PREFIX is TREE/clocks/<model>/<engine>/r<N>, to TREE/memory/<model>/<engine>/r<N>.summary.json")
	fs.StringArrayVar(&f.expect, "expect", nil, "a declared state of the box, `KEY=VALUE` (repeatable): sm_clock_mhz=1830 (a locked SM clock: the free busy median within 1%), power_limit_w=700 (the enforced limit), cpu_governor=performance (recorded); written into the record, and a declaration the stream does not bear out is clock.expectation")
	fs.StringVar(&f.backend, "backend", sampler.KindAuto, "how to read the GPU: "+strings.Join(sampler.Kinds, ", ")+" (auto prefers NVML, falls back to nvidia-smi when NVML is not installed, and to amd-smi where no NVIDIA driver answers)")
}

// validate checks the flags and reads the GPU selection: --gpu when
// gpuSet, else CUDA_VISIBLE_DEVICES through lookup, else GPU 0.
func (f *recordingFlags) validate(gpuSet bool, lookup func(string) (string, bool)) error {
	switch {
	case f.out == "":
		return usageErr("--out PREFIX is required")
	case f.interval < sampler.MinInterval:
		return usageErr("--interval %v: want at least %v: nvidia-smi takes tens to hundreds of ms per reading, and utilization.gpu is averaged over 1/6 s to 1 s", f.interval, sampler.MinInterval)
	case f.maxDuration <= 0:
		return usageErr("--max-duration %v: want a positive duration", f.maxDuration)
	}
	for _, p := range f.enginePIDs {
		if p <= 0 {
			return usageErr("--engine-pid %d: want a process id > 0", p)
		}
	}
	for _, p := range f.enginePorts {
		if p <= 0 || p > sampler.MaxPort {
			return usageErr("--engine-port %d: want a TCP port, 1 to %d", p, sampler.MaxPort)
		}
	}
	known := false
	for _, k := range sampler.Kinds {
		known = known || f.backend == k
	}
	if !known {
		return usageErr("--backend %q: want one of %s", f.backend, strings.Join(sampler.Kinds, ", "))
	}
	var err error
	if f.expectation, err = clocks.ParseExpect(f.expect); err != nil {
		return usageErr("--expect %v", err)
	}
	if gpuSet {
		f.gpus, err = sampler.ParseGPUFlag(f.gpu)
	} else {
		f.gpus, err = sampler.SelectFromEnv(lookup)
	}
	if err != nil {
		return usageErr("%v", err)
	}
	return nil
}

// testProbeLatency is what probeLatencyEnv says, zero where unset.
func testProbeLatency() time.Duration {
	probe, _ := time.ParseDuration(os.Getenv(probeLatencyEnv))
	return probe
}

// config turns the flags into a sampler configuration whose status lines go
// to errOut, prefixed with the command's name.
func (f *recordingFlags) config(s *IO, name string, pid int, bootIDFile string) (sampler.Config, func(context.Context) (sampler.Backend, error)) {
	logf := func(format string, args ...any) {
		fmt.Fprintf(s.ErrOut, "clockgate %s: %s\n", name, fmt.Sprintf(format, args...))
	}
	cfg := sampler.Config{
		ProbeLatency: testProbeLatency(),
		Prefix:       f.out,
		Interval:     f.interval,
		MaxDuration:  f.maxDuration,
		PID:          pid,
		BootIDFile:   bootIDFile,
		Logf:         logf,
		EnginePIDs:   f.enginePIDs,
		EnginePorts:  f.enginePorts,
		MemoryOut:    f.memoryOut,
		Expect:       f.expectation,
	}
	open := func(ctx context.Context) (sampler.Backend, error) {
		return sampler.Open(ctx, sampler.Options{Kind: f.backend, GPUs: f.gpus, Logf: logf})
	}
	return cfg, open
}

// printVerdict judges the leg just written, as 'clockgate check' would, and
// prints the verdict in one line on errOut: ok, or the reason codes. When
// the sampler wrote no record (res says so), there is nothing to check:
// the leg is clock.missing, and the line says so instead of pointing at a
// record that is not there, or is not the sampler's. note, when not empty,
// ends the line (what the clock cannot say: a command killed by a signal).
func printVerdict(s *IO, name, prefix string, res *sampler.Result, note string) {
	if res == nil || res.Record == nil {
		fmt.Fprintf(s.ErrOut, "clockgate %s: verdict: %s (no record was written, so this leg has no clock evidence: measure it again)%s\n", name, clocks.CodeMissing, note)
		return
	}
	rec := sampler.RecordPath(prefix)
	leg := clocks.LoadLeg(clocks.LegFiles{Name: filepath.Base(prefix), RecordPath: rec, StreamPath: sampler.StreamPath(prefix)})
	if leg.Eligible() {
		fmt.Fprintf(s.ErrOut, "clockgate %s: verdict: ok%s\n", name, note)
		return
	}
	fmt.Fprintf(s.ErrOut, "clockgate %s: verdict: %s (clockgate check %s says why)%s\n", name, strings.Join(clocks.Codes(leg.Reasons), " "), rec, note)
}

// samplerExit gives a sampler error its exit code: setup errors about the
// inputs are usage errors (2), everything else a refusal (1).
func samplerExit(err error) error {
	for _, e := range []error{sampler.ErrExists, sampler.ErrNoProcess, sampler.ErrBootID, sampler.ErrConfig, sampler.ErrSelect, sampler.ErrEngine} {
		if errors.Is(err, e) {
			return &exitError{code: ExitUsage, err: err}
		}
	}
	return &exitError{code: ExitFailed, err: err}
}

type sampleOptions struct {
	IO         *IO
	flags      recordingFlags
	pid        int
	bootIDFile string
	// leg is the --leg DIR of a multi-host leg, host --host (SPEC §12.3).
	leg, host string
}

func init() { register(NewCmdSample) }

// NewCmdSample builds "clockgate sample".
func NewCmdSample(s *IO) *cobra.Command {
	opts := &sampleOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "sample --out PREFIX [--pid PID] [--max-duration 7200s] [--interval 1s] [--gpu 0|0,1,2,3|all|GPU-UUID,...] [--backend auto|nvml|nvidia-smi|amd-smi]",
		Short: "Record GPU clock state into PREFIX.samples.jsonl until told to stop",
		Long: `sample reads the clock state of the leg's GPUs every --interval and appends
the samples to PREFIX.samples.jsonl as whole lines the moment they are taken.
When it stops it writes the record the stream folds to, PREFIX.summary.json,
atomically.

Which GPUs (one stream per leg, however many GPUs it spans):
  --gpu 3               one GPU, by nvidia-smi index
  --gpu 0,1,2,3         several, as a tensor-parallel leg uses (TP=4)
  --gpu all             every GPU the driver lists
  --gpu GPU-5f3c…,…     by UUID (nvidia-smi -L), or a prefix naming one GPU
  no --gpu              the GPUs $` + sampler.EnvCUDAVisibleDevices + ` names when it is set,
                        read as CUDA reads it (indices or UUIDs), else GPU 0
A GPU named twice, an index or UUID the box lacks, a UUID prefix naming
several GPUs, a MIG instance (MIG-…: clockgate samples whole GPUs),
` + sampler.EnvCUDAVisibleDevices + ` set but empty or holding an entry CUDA would stop at, and
` + sampler.EnvCUDAVisibleDevices + ` indices on a box of different GPUs without
` + sampler.EnvCUDADeviceOrder + `=PCI_BUS_ID (CUDA may number them otherwise) are refused
(exit 2), saying what to pass instead. The status line says which GPUs were
chosen and why. Every reading asks all of them at once (one nvidia-smi call,
or one NVML pass, per interval, however many GPUs), and writes one line per
GPU, each naming its GPU (gpu_index, gpu_uuid), all with the reading's time.

It stops, and records why (window.stop_reason), when:
  pid-exit      the --pid process is gone: watched continuously (a pidfd, or
                a poll every 20 ms), so it stops within 100 ms whatever the
                interval; a zombie or a reused pid counts as gone
  signal        it receives SIGTERM or SIGINT; a reading in flight that the
                same signal ended (Ctrl-C reaches the call too where the
                signal goes to every process) is dropped, and the window
                ends at the last whole reading
  max-duration  --max-duration has passed; the record is then partial and the
                leg will not be established
  refused       a refusal (below); the record quotes it, and the leg will
                not be established

It only reads GPU state; it never changes it (no -lgc, -ac, -pm, -r).

A refusal stops it: a reading that cannot be taken whole on every GPU
(nvidia-smi exiting non-zero, [N/A] or any other non-number where a number
belongs, a missing column, an answer for a GPU not asked for, or none for one
that was; the message names the GPU), a reading not answered within 5 s (its
whole process group is killed), a write that fails (the stream is cut back to
its last whole reading), PREFIX.samples.jsonl deleted, moved or replaced
while written, or a window whose last sample is more than 3 intervals, the
bound every gap is held to, before the stop (the reading in flight is
named). sample then writes the record with stop_reason refused and the
refusal quoted, says why, and exits 1. A reading slower than --interval is
taken; the time it cost is a gap in the stream, and a gap over 3 intervals
is clock.coverage. A stop more than 3 intervals after the last sample lets
a reading that started within 3 intervals of the stop run until 3
intervals after its own start, and takes its sample as the window's last.
A stop or refusal before the first sample writes no record and exits 1.

One host of a leg across several hosts (clockgate leg init; docs/multi-host.md):
--leg DIR in place of --out writes DIR/hosts/<host>.samples.jsonl, .summary.json
and .memory.json at leg.json's interval, the host being $` + slurmNodeEnv + `, else
--host, else the host name; a host leg.json does not list, or one whose files
exist, is refused (exit 2, nothing written). Each sample then carries mono_s
(CLOCK_BOOTTIME at the reading) and the record time_sync at the window's start
and end (adjtimex, and chronyc -c tracking where chronyc exists).

At the stop it prints the leg's verdict in one line on stderr, as
'clockgate check' would judge it: "verdict: ok", or the reason codes
("clock.missing" and no record to check when none was written).

It refuses to start (exit 2) when PREFIX.samples.jsonl or PREFIX.summary.json
already exists, when PREFIX ends in a path separator or its name is too long
for the record's temporary file (255-byte names), when PREFIX is inside a
clocks/ directory but is not clocks/<model>/<engine>/r<N> (a model id with a
"/" in it: give it one path segment, meta-llama--Llama-3.1-8B-Instruct),
when --interval is under
100ms, when --pid is not running, or when the boot id cannot be read
(/proc/sys/kernel/random/boot_id; $` + bootIDFileEnv + ` overrides the file).
It refuses (exit 1) when nvidia-smi or NVML cannot give every field at start,
after at most one 5 s probe. Status lines go to stderr; stdout is not used.`,
		Example: `  # Sample GPU 0 in the background while a benchmark leg runs; stop it with
  # SIGTERM, and let it stop by itself if this shell dies or after 2 hours.
  clockgate sample --out clocks/llama/vllm/r1 --pid $$ --max-duration 7200s &
  clock_pid=$!
  run_bench_loop
  kill -TERM "$clock_pid"; wait "$clock_pid"

  # Sample GPU 1 every 500 ms until process 4242 exits, reading nvidia-smi.
  clockgate sample --out /tmp/leg --pid 4242 --gpu 1 --interval 500ms --backend nvidia-smi

  # A tensor-parallel leg on four GPUs (TP=4): one stream, four lines a second.
  clockgate sample --out clocks/llama/vllm/r1 --pid "$server_pid" --gpu 0,1,2,3 &

  # Every GPU on the box.
  clockgate sample --out clocks/llama/vllm/r1 --pid "$server_pid" --gpu all &

  # One host of a multi-host leg, on every node under Slurm (stop it with SIGINT to srun).
  srun --overlap --nodes=3 --ntasks-per-node=1 --disable-status clockgate sample --leg clocks/llama/dynamo/r1 &

  # The GPUs the server was given: without --gpu, CUDA_VISIBLE_DEVICES decides.
  export CUDA_VISIBLE_DEVICES=4,5,6,7
  vllm serve llama --tensor-parallel-size 4 & server_pid=$!
  clockgate sample --out clocks/llama/vllm/r1 --pid "$server_pid" &`,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("sample takes no arguments, found %q (did you mean 'clockgate record'?)", args)
			}
			if err := sampleLeg(opts, c.Flags().Changed("out"), c.Flags().Changed("interval"), c.Flags().Changed("memory-out")); err != nil {
				return err
			}
			if err := opts.flags.validate(c.Flags().Changed("gpu"), os.LookupEnv); err != nil {
				return err
			}
			if opts.pid < 0 || c.Flags().Changed("pid") && opts.pid == 0 {
				return usageErr("--pid %d: want a process id > 0", opts.pid)
			}
			opts.bootIDFile = os.Getenv(bootIDFileEnv)
			return runSample(opts)
		},
	}
	opts.flags.add(cmd.Flags())
	cmd.Flags().IntVar(&opts.pid, "pid", 0, "stop when this process exits (0: no process bound)")
	cmd.Flags().StringVar(&opts.leg, "leg", "", "a multi-host leg's `DIR` (clockgate leg init): sample this host into DIR/hosts/<host>.*, at leg.json's interval, in place of --out")
	cmd.Flags().StringVar(&opts.host, "host", "", "with --leg, this host's name where $"+slurmNodeEnv+" is unset and the host name is not the one leg.json lists")
	return cmd
}

// sampleLeg sets up sample --leg DIR: the host's prefix, its memory
// record and leg.json's interval. It refuses (exit 2, nothing written) a
// host leg.json does not list, or one whose files exist.
func sampleLeg(opts *sampleOptions, outSet, intervalSet, memorySet bool) error {
	if opts.leg == "" {
		if opts.host != "" {
			return usageErr("--host names a host of a multi-host leg: give --leg DIR with it")
		}
		return nil
	}
	switch {
	case outSet:
		return usageErr("--leg DIR and --out PREFIX: give one (a host of a multi-host leg writes DIR/hosts/<host>.*)")
	case intervalSet:
		return usageErr("--leg DIR: the interval is leg.json's; drop --interval (set it with clockgate leg init --interval)")
	case memorySet:
		return usageErr("--leg DIR: the host's memory record is DIR/hosts/<host>.memory.json; drop --memory-out")
	}
	m, err := multileg.Load(opts.leg)
	if err != nil {
		return usageErr("--leg: %v (run clockgate leg init --out %s first)", err, opts.leg)
	}
	host, err := legHostName(opts.host)
	if err != nil {
		return usageErr("--leg: %v", err)
	}
	if _, ok := m.Host(host); !ok {
		names := make([]string, len(m.Hosts))
		for i, h := range m.Hosts {
			names[i] = h.Host
		}
		return usageErr("--leg %s: this host, %s, is not among leg.json's hosts (%s): sample on the leg's hosts only, or pass --host NAME where this host is known by another name", opts.leg, host, strings.Join(names, ", "))
	}
	prefix := multileg.Prefix(opts.leg, host)
	if found, _ := filepath.Glob(globEscape(prefix) + ".*"); len(found) > 0 {
		return usageErr("--leg %s: %s already has files (%s): a host samples a leg once; start a new leg (r<N+1>)", opts.leg, host, strings.Join(found, ", "))
	}
	opts.flags.out, opts.flags.memoryOut, opts.flags.interval = prefix, multileg.MemoryPath(opts.leg, host), m.Interval()
	return nil
}

// globEscape escapes the pattern characters of a path for filepath.Glob.
func globEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func runSample(opts *sampleOptions) error {
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigc)

	ctx := context.Background()
	cfg, open := opts.flags.config(opts.IO, "sample", opts.pid, opts.bootIDFile)
	cfg.Leg = opts.leg != ""
	smp, err := sampler.New(ctx, cfg, open)
	if err != nil {
		return samplerExit(err)
	}
	stop := make(chan string, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sigc:
			stop <- clocks.StopSignal
		case <-done:
		}
	}()
	res, err := smp.Run(ctx, stop)
	printVerdict(opts.IO, "sample", opts.flags.out, res, "")
	if err != nil {
		return samplerExit(err)
	}
	return nil
}
