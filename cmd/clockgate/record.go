package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/sampler"
)

type recordOptions struct {
	IO         *IO
	flags      recordingFlags
	argv       []string
	bootIDFile string
}

func init() { register(NewCmdRecord) }

// NewCmdRecord builds "clockgate record".
func NewCmdRecord(s *IO) *cobra.Command {
	opts := &recordOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "record --out PREFIX [--max-duration 7200s] [--interval 1s] [--gpu 0|0,1,2,3|all|GPU-UUID,...] [--backend auto|nvml|nvidia-smi|amd-smi] -- COMMAND [ARG...]",
		Short: "Run COMMAND and record GPU clock state while it runs",
		Long: `record runs COMMAND as its child, with stdin, stdout and stderr passed
through, samples the leg's GPUs as 'clockgate sample' does while it runs, and
exits with COMMAND's status (128+N when COMMAND died of signal N). SIGINT and
SIGTERM are forwarded to COMMAND; sampling stops when COMMAND exits
(stop_reason command-exit), so the sampler can never outlive it. A Ctrl-C at a
terminal reaches COMMAND twice: from the terminal, and forwarded.

The GPUs are chosen as 'clockgate sample --help' says: --gpu (an index, a
comma list, all, or UUIDs), else the GPUs $CUDA_VISIBLE_DEVICES names, which
are the GPUs COMMAND sees when it inherits the variable, else GPU 0. One
stream per leg, one line per GPU per reading, one query per reading for all
of them.

Sampling is set up before COMMAND starts. If it cannot start — nvidia-smi or
NVML refuses, the GPUs asked for are not on the box, PREFIX.samples.jsonl or PREFIX.summary.json already exists, the
boot id cannot be read, PREFIX is inside a clocks/ directory but is not
clocks/<model>/<engine>/r<N> (a model id with a "/" in it) — COMMAND is not run, and record exits 1 (a refusal)
or 2 (a usage error).

If sampling is refused while COMMAND runs (the refusals of 'clockgate sample':
a reading refused or not answered within 5 s, a failed write, the stream
deleted or replaced, an unobserved end), record stops sampling, says why on
stderr at once, writes the record with stop_reason refused and the refusal
quoted (the leg will not be established), and keeps waiting for COMMAND. It
then exits with COMMAND's status if that is not 0, and with 1 otherwise, so a
refused leg never looks like a clean run. The same holds when COMMAND exits
before the first sample (no record is written then).

When sampling stops, record prints the leg's verdict in one line on stderr,
as 'clockgate check' would judge it: "verdict: ok", or the reason codes
("clock.missing" and no record to check when none was written).

Reaching --max-duration stops sampling (stop_reason max-duration, a partial
record) but not COMMAND: record keeps waiting for it and exits with its
status. It only reads GPU state; it never changes it.`,
		Example: `  # One leg of a benchmark against a server started beforehand on port
  # 8000 (named, so it and its workers are the leg's own): the clock
  # evidence and the memory record land in the tree, and --result-dir puts
  # the bench's result there too.
  clockgate record --out evidence/clocks/llama/vllm/r1 --engine-port 8000 --interval 250ms -- \
      vllm bench serve --model llama --max-concurrency 8 \
        --save-result --result-dir evidence/bench/llama/vllm/r1

  # Flags after COMMAND belong to COMMAND.
  clockgate record --out /tmp/leg --interval 500ms ./bench.sh --points 8,16

  # A tensor-parallel leg (TP=4) on GPUs 0-3.
  clockgate record --out clocks/llama/vllm/r1 --gpu 0,1,2,3 -- ./bench_tp4.sh

  # Every GPU on the box.
  clockgate record --out clocks/llama/vllm/r1 --gpu all -- ./bench_tp8.sh

  # The GPUs COMMAND is given: without --gpu, CUDA_VISIBLE_DEVICES decides,
  # and COMMAND inherits it.
  CUDA_VISIBLE_DEVICES=4,5,6,7 clockgate record --out clocks/llama/vllm/r1 -- \
      ./bench.sh --tensor-parallel-size 4

  # A leg on a box declared locked at 1830 MHz under a 700 W limit: a
  # lock the power cap cannot hold is clock.expectation at this leg.
  clockgate record --out clocks/llama/vllm/r1 --expect sm_clock_mhz=1830 \
      --expect power_limit_w=700 -- ./bench.sh`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("record needs a COMMAND to run: clockgate record --out PREFIX -- COMMAND [ARG...]")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := opts.flags.validate(c.Flags().Changed("gpu"), os.LookupEnv); err != nil {
				return err
			}
			opts.argv = args
			opts.bootIDFile = os.Getenv(bootIDFileEnv)
			return runRecord(opts)
		},
	}
	cmd.Flags().SetInterspersed(false)
	opts.flags.add(cmd.Flags())
	return cmd
}

func runRecord(opts *recordOptions) error {
	name := opts.argv[0]
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigc)

	ctx := context.Background()
	cfg, open := opts.flags.config(opts.IO, "record", 0, opts.bootIDFile)
	smp, err := sampler.New(ctx, cfg, open)
	if err != nil {
		return samplerExit(fmt.Errorf("%w (%s not started)", err, name))
	}
	select {
	case sig := <-sigc:
		smp.Close()
		return &exitError{code: 128 + int(sig.(syscall.Signal)), err: fmt.Errorf("%v before %s started; not started", sig, name)}
	default:
	}
	child := exec.Command(name, opts.argv[1:]...)
	child.Stdin, child.Stdout, child.Stderr = opts.IO.In, opts.IO.Out, opts.IO.ErrOut
	if err := child.Start(); err != nil {
		smp.Close()
		return usageErr("cannot run %s: %v", name, err)
	}
	smp.SetCommand(child.Process.Pid)
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = child.Wait()
		close(exited)
	}()
	stop := make(chan string, 1)
	go func() {
		for {
			select {
			case sig := <-sigc:
				child.Process.Signal(sig)
			case <-exited:
				stop <- clocks.StopCommandExit
				return
			}
		}
	}()

	res, runErr := smp.Run(ctx, stop)
	note := ""
	select {
	case <-exited:
		if ws, ok := child.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			note = fmt.Sprintf("; but %s was killed by signal %d (%v): its run did not finish, so its results are not a leg's", name, int(ws.Signal()), ws.Signal())
		}
	default:
	}
	printVerdict(opts.IO, "record", opts.flags.out, res, note)
	select {
	case <-exited:
	default:
		if runErr != nil {
			cfg.Logf("sampling stopped: %v; waiting for %s to exit", runErr, name)
		} else {
			cfg.Logf("sampling stopped; waiting for %s to exit", name)
		}
		<-exited
	}
	var ee *exec.ExitError
	if child.ProcessState == nil || waitErr != nil && !errors.As(waitErr, &ee) {
		return &exitError{code: ExitFailed, err: fmt.Errorf("waiting for %s: %v", name, waitErr)}
	}
	code := exitStatus(child.ProcessState)
	if code != 0 {
		cfg.Logf("%s exited with status %d", name, code)
	}
	if runErr != nil {
		if code == 0 {
			code = ExitFailed
		}
		return &exitError{code: code, err: runErr}
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// exitStatus is the status a shell would report: the exit code, or 128+N
// for a process killed by signal N.
func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
