package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clockgate/clockgate/atomicfile"
	"github.com/clockgate/clockgate/multileg"
	"github.com/clockgate/clockgate/sampler"
)

// slurmNodeEnv is the node name Slurm gives every task (SPEC §12.3: a
// sampler's host).
const slurmNodeEnv = "SLURMD_NODENAME"

// slurmNodeListEnv is the allocation's node list, leg init's default.
const slurmNodeListEnv = "SLURM_JOB_NODELIST"

// legWaitPoll is how often leg wait looks at the hosts' streams.
const legWaitPoll = 100 * time.Millisecond

// legHostName is the host a command runs on, as a leg names it:
// $SLURMD_NODENAME, else flag, else the host name.
func legHostName(flag string) (string, error) {
	if h := os.Getenv(slurmNodeEnv); h != "" {
		return h, nil
	}
	if flag != "" {
		return flag, nil
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "", fmt.Errorf("cannot tell this host's name (%v): pass --host NAME", err)
	}
	return h, nil
}

func init() { register(NewCmdLeg) }

// NewCmdLeg builds "clockgate leg" and its subcommands.
func NewCmdLeg(s *IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "leg init|wait|close",
		Short: "Set up, wait for and close a leg recorded on several hosts (Slurm)",
		Long: `A leg that spans several hosts (prefill on one node and decode on others, or
tensor/pipeline parallel across nodes) is a directory where a single-host leg
is a file prefix:

  DIR/leg.json                    written once by 'clockgate leg init'
  DIR/hosts/<host>.samples.jsonl  each host's stream ('clockgate sample --leg DIR')
  DIR/hosts/<host>.summary.json   each host's record, with its time_sync
  DIR/hosts/<host>.memory.json    each host's peak GPU memory and own RSS
  DIR/points.jsonl                the client's marks ('clockgate mark --leg DIR')

and 'clockgate leg close DIR' writes the leg's memory record. check DIR and
summarize judge each host on its own streams and the hosts together: time
sync across hosts, the clock.host_* codes, clock.wall_step, clock.gpu_skew
per group across hosts (docs/multi-host.md).`,
		Example: `  clockgate leg init --out clocks/llama/dynamo/r1 --hosts 'node[1-3]' --role prefill=node1 --role decode=node2,node3
  srun --overlap --nodes=3 --ntasks-per-node=1 --disable-status clockgate sample --leg clocks/llama/dynamo/r1 --gpu all &
  clockgate leg wait --started clocks/llama/dynamo/r1
  clockgate leg close clocks/llama/dynamo/r1`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("leg: unknown subcommand %q: want init, wait or close", args[0])
			}
			return usageErr("leg needs a subcommand: init, wait or close")
		},
		RunE: func(c *cobra.Command, args []string) error { return nil },
	}
	cmd.AddCommand(newCmdLegInit(s), newCmdLegWait(s), newCmdLegClose(s))
	return cmd
}

type legInitOptions struct {
	out, hosts, client string
	roles              []string
	interval           time.Duration
	skewBound          time.Duration
	skewDeclared       time.Duration
}

func newCmdLegInit(s *IO) *cobra.Command {
	o := &legInitOptions{}
	cmd := &cobra.Command{
		Use:   "init --out DIR [--hosts LIST] [--role NAME=HOSTS]... [--interval 1s] [--skew-bound 100ms] [--skew-bound-declared D]",
		Short: "Write DIR/leg.json: the leg's hosts, their roles, its interval and skew bound",
		Long: `init writes DIR/leg.json once, atomically, before any sampler starts; it
refuses (exit 2) a DIR whose leg.json exists (it is never rewritten).

--hosts is host names or a Slurm node list, expanded as 'scontrol show
hostnames' does (node[1-3,5] is node1 node2 node3 node5; gpu[08-11] keeps
the zero padding), by default $` + slurmNodeListEnv + `. The client, the host
whose clock stamps the marks, is the host running init ($` + slurmNodeEnv + `,
else the host name).

--role NAME=HOSTS gives hosts a role (prefill, decode); where roles are given
every host has exactly one, and a host's group, the GPUs whose clocks are
compared with each other, is its role. Without roles all hosts are one group
(tensor or pipeline parallel across nodes).

--skew-bound is the most two hosts' clocks may disagree (default 100ms, the
shortest interval). --skew-bound-declared D states a bound measured otherwise
(PTP monitoring) for hosts without chronyc; it is recorded and shown as a
CAVEAT.`,
		Example: `  # Inside an sbatch allocation of three nodes: prefill on node1, decode on node2 and node3.
  clockgate leg init --out clocks/llama/dynamo/r1 --role prefill=node1 --role decode=node2,node3

  # Named hosts, one group (tensor parallel across two nodes), sampled every 500 ms.
  clockgate leg init --out clocks/llama/vllm/r1 --hosts 'gpu[01-02]' --interval 500ms`,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("leg init takes no arguments, found %q", args)
			}
			return runLegInit(s, o, c.Flags().Changed("skew-bound-declared"))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "the leg's `DIR`, as TREE/clocks/<model>/<engine>/r<N> (required)")
	f.StringVar(&o.hosts, "hosts", "", "the leg's hosts: names or a Slurm node list (node[1-3,5]); default $"+slurmNodeListEnv)
	f.StringArrayVar(&o.roles, "role", nil, "`NAME=HOSTS`: the hosts of a role (repeatable): prefill=node1, decode=node[2-3]")
	f.DurationVar(&o.interval, "interval", time.Second, fmt.Sprintf("time between samples on every host, at least %v", sampler.MinInterval))
	f.DurationVar(&o.skewBound, "skew-bound", multileg.DefaultSkewBound, "the most two hosts' clocks may disagree")
	f.DurationVar(&o.skewDeclared, "skew-bound-declared", 0, "a bound on the hosts' clocks measured otherwise (PTP monitoring), for hosts without chronyc")
	f.StringVar(&o.client, "host", "", "this host's name where neither $"+slurmNodeEnv+" nor the host name is the one the leg knows it by")
	return cmd
}

func runLegInit(s *IO, o *legInitOptions, declared bool) error {
	switch {
	case o.out == "":
		return usageErr("leg init: --out DIR is required (TREE/clocks/<model>/<engine>/r<N>)")
	case o.interval < sampler.MinInterval:
		return usageErr("leg init: --interval %v: want at least %v", o.interval, sampler.MinInterval)
	case o.skewBound <= 0:
		return usageErr("leg init: --skew-bound %v: want a positive duration (default %v)", o.skewBound, multileg.DefaultSkewBound)
	case declared && o.skewDeclared <= 0:
		return usageErr("leg init: --skew-bound-declared %v: want a positive duration", o.skewDeclared)
	}
	list := o.hosts
	if list == "" {
		list = os.Getenv(slurmNodeListEnv)
	}
	if list == "" {
		return usageErr("leg init: no hosts: pass --hosts LIST (node[1-3]), or run it inside a Slurm allocation ($%s)", slurmNodeListEnv)
	}
	names, err := multileg.ExpandHosts(list)
	if err != nil {
		return usageErr("leg init: --hosts: %v", err)
	}
	hosts, err := multileg.Roles(names, o.roles)
	if err != nil {
		return usageErr("leg init: %v", err)
	}
	client, err := legHostName(o.client)
	if err != nil {
		return usageErr("leg init: %v", err)
	}
	m := &multileg.Manifest{Schema: multileg.Schema, IntervalS: o.interval.Seconds(), SkewBoundMS: float64(o.skewBound) / float64(time.Millisecond),
		Client: client, Hosts: hosts}
	if declared {
		d := float64(o.skewDeclared) / float64(time.Millisecond)
		m.SkewBoundDeclaredMS = &d
	}
	if err := multileg.Write(o.out, m); err != nil {
		if errors.Is(err, atomicfile.ErrExists) {
			return usageErr("leg init: %s already exists: a leg is set up once; start a new leg (r<N+1>) or move the old one", multileg.ManifestPath(o.out))
		}
		return usageErr("leg init: %v", err)
	}
	fmt.Fprintf(s.ErrOut, "clockgate leg init: wrote %s: %d hosts (%s), interval %v, skew bound %v, client %s\n",
		multileg.ManifestPath(o.out), len(hosts), strings.Join(names, ","), o.interval, o.skewBound, client)
	return nil
}

type legWaitOptions struct {
	dir     string
	timeout time.Duration
}

func newCmdLegWait(s *IO) *cobra.Command {
	o := &legWaitOptions{}
	cmd := &cobra.Command{
		Use:   "wait --started DIR [--timeout 60s]",
		Short: "Wait until every host's sampler has taken its first reading",
		Long: `wait returns (exit 0) when every host leg.json lists has a stream with at
least one whole reading in DIR/hosts/<host>.samples.jsonl. When --timeout
passes first it exits 1 naming the hosts without one: start their samplers
(srun ... clockgate sample --leg DIR), or look at their errors.`,
		Example: `  srun --overlap --nodes=3 --ntasks-per-node=1 --disable-status clockgate sample --leg "$leg" &
  clockgate leg wait --started "$leg" --timeout 60s`,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("leg wait takes no arguments, found %q (the leg is --started DIR)", args)
			}
			if o.dir == "" {
				return usageErr("leg wait: --started DIR is required")
			}
			if o.timeout <= 0 {
				return usageErr("leg wait: --timeout %v: want a positive duration", o.timeout)
			}
			return runLegWait(s, o)
		},
	}
	cmd.Flags().StringVar(&o.dir, "started", "", "the leg's `DIR`: wait until every host's sampler has started")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 60*time.Second, "give up after this long")
	return cmd
}

// hasReading reports whether the stream at path holds a whole line.
func hasReading(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 && strings.IndexByte(string(buf[:n]), '\n') >= 0 {
			return true
		}
		if err != nil {
			return false
		}
	}
}

func runLegWait(s *IO, o *legWaitOptions) error {
	m, err := multileg.Load(o.dir)
	if err != nil {
		return usageErr("leg wait: %v (run clockgate leg init --out %s first)", err, o.dir)
	}
	deadline := time.Now().Add(o.timeout)
	for {
		var without []string
		for _, h := range m.Hosts {
			if !hasReading(sampler.StreamPath(multileg.Prefix(o.dir, h.Host))) {
				without = append(without, h.Host)
			}
		}
		if len(without) == 0 {
			fmt.Fprintf(s.ErrOut, "clockgate leg wait: all %d hosts are sampling\n", len(m.Hosts))
			return nil
		}
		if !time.Now().Before(deadline) {
			return &exitError{code: ExitFailed, err: fmt.Errorf("leg wait: after %v, %d of %d hosts have no reading in %s: %s; start their samplers (srun --overlap --nodes=%d --ntasks-per-node=1 --disable-status clockgate sample --leg %s) or read their errors",
				o.timeout, len(without), len(m.Hosts), filepath.Join(o.dir, multileg.HostsDir), strings.Join(without, ", "), len(m.Hosts), o.dir)}
		}
		time.Sleep(min(legWaitPoll, time.Until(deadline)))
	}
}

type legCloseOptions struct {
	memoryOut string
}

func newCmdLegClose(s *IO) *cobra.Command {
	o := &legCloseOptions{}
	cmd := &cobra.Command{
		Use:   "close DIR [--memory-out FILE]",
		Short: "Check every host wrote its record and write the leg's memory record",
		Long: `close runs after the samplers have stopped (their srun has returned). It
checks that every host leg.json lists wrote its record, DIR/hosts/<host>.summary.json,
and exits 1 naming the hosts without one. Under Slurm a sampler writes its
record only when stopped by SIGINT to 'srun --disable-status' or by
'scancel --signal=INT JOBID.STEPID': SIGTERM to srun SIGKILLs every task.

It then writes the leg's memory record, TREE/memory/<model>/<engine>/r<N>.summary.json
for DIR = TREE/clocks/<model>/<engine>/r<N> (else --memory-out FILE):
peak_gpu_memory_mib the sum of the hosts' peaks, peak_host_rss_mib likewise
(where every host has one), n the fewest readings of any host, and hosts each
host's part. It writes it once; an existing one is refused.`,
		Example: `  kill -INT "$srun_pid"; wait "$srun_pid"
  clockgate leg close clocks/llama/dynamo/r1`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("leg close takes one DIR, found %d arguments", len(args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			return runLegClose(s, args[0], o)
		},
	}
	cmd.Flags().StringVar(&o.memoryOut, "memory-out", "", "write the leg's memory record to `FILE` (where DIR is not in a tree)")
	return cmd
}

func runLegClose(s *IO, dir string, o *legCloseOptions) error {
	if _, err := multileg.Load(dir); err != nil {
		return usageErr("leg close: %v (is %s a leg set up by clockgate leg init?)", err, dir)
	}
	mem, path, err := multileg.Close(dir, o.memoryOut)
	if err != nil {
		return &exitError{code: ExitFailed, err: fmt.Errorf("leg close: %v", err)}
	}
	hosts := make([]string, len(mem.Hosts))
	for i, h := range mem.Hosts {
		hosts[i] = h.Host
	}
	sort.Strings(hosts)
	fmt.Fprintf(s.ErrOut, "clockgate leg close: every host wrote its record (%s); wrote %s: peak GPU memory %v MiB over %d hosts; judge the leg with clockgate check %s\n",
		strings.Join(hosts, ", "), path, mem.PeakGPUMemoryMiB, len(mem.Hosts), dir)
	return nil
}
