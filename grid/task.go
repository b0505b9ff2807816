package grid

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clockgate/clockgate/sampler"
)

// TaskCommand is the hidden clockgate command a [slurm] grid runs on its
// nodes, as a step's task: "read" prints the node's reading (NodeReading,
// one JSON line), "exec" runs a role's serve with {node} and {node_rank}
// expanded for the node it is on.
const TaskCommand = "grid-task"

// Task runs clockgate grid-task args on a node and returns its exit
// status.
func Task(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "clockgate grid-task: want read or exec (it is run by clockgate grid on a Slurm allocation)")
		return ExitUsage
	}
	switch args[0] {
	case "read":
		return taskRead(args[1:], stdout, stderr)
	case "exec":
		return taskExec(args[1:], stderr)
	case "sample":
		return taskSample(args[1:], stderr)
	}
	fmt.Fprintf(stderr, "clockgate grid-task: unknown task %q: want read or exec\n", args[0])
	return ExitUsage
}

// taskNode is the node a task runs on: $SLURMD_NODENAME, else the host
// name.
func taskNode() string {
	if n := os.Getenv(SlurmNodeNameEnv); n != "" {
		return n
	}
	h, _ := os.Hostname()
	return h
}

func taskRead(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("grid-task read", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := fs.String("backend", sampler.KindAuto, "")
	gpus := fs.String("gpus", "0", "")
	port := fs.Int("port", 0, "")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	r := NodeReading{Node: taskNode(), GPUs: []NodeGPU{}, Compute: []NodeCompute{}}
	print := func() int {
		data, _ := json.Marshal(r)
		fmt.Fprintln(stdout, string(data))
		return 0
	}
	sel, err := sampler.ParseGPUFlag(*gpus)
	if err != nil {
		r.Err = fmt.Sprintf("gpus = %q: %v", *gpus, err)
		return print()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := sampler.Open(ctx, sampler.Options{Kind: *backend, GPUs: sel, Logf: func(string, ...any) {}})
	if err != nil {
		r.Err = fmt.Sprintf("cannot read the GPUs: %v", err)
		return print()
	}
	defer b.Close()
	boot, _ := sampler.ReadBootID(sampler.BootIDPath)
	r.BootID = boot
	rows, err := b.Read(ctx, time.Now(), boot)
	if err != nil {
		r.Err = fmt.Sprintf("reading the GPUs: %v", err)
		return print()
	}
	on := map[string]bool{}
	for _, s := range rows {
		r.GPUs = append(r.GPUs, NodeGPU{Index: s.GPUIndex, UUID: s.GPUUUID, TempC: s.TemperatureGPUC, Driver: s.DriverVersion})
		on[s.GPUUUID] = true
	}
	pl, ok := b.(sampler.ProcessLister)
	if !ok {
		r.Err = fmt.Sprintf("%s cannot list compute processes, so the GPUs cannot be known free", b.Name())
		return print()
	}
	ps, err := pl.ComputeProcesses(ctx)
	if err != nil {
		r.Err = fmt.Sprintf("listing compute processes: %v", err)
		return print()
	}
	for _, p := range ps {
		if on[p.GPUUUID] {
			r.Compute = append(r.Compute, NodeCompute{PID: p.PID, Name: p.Name, UUID: p.GPUUUID})
		}
	}
	if *port > 0 {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(*port))
		if err != nil {
			r.Port = fmt.Sprintf("port %d is taken on %s: %v", *port, r.Node, err)
		} else {
			l.Close()
		}
	}
	return print()
}

// taskExec runs a role's serve on this node: {node} is the node's name,
// {node_rank} its place among the role's nodes (from 0); the node's GPUs
// (--gpus-of NODE=UUID,…) are its CUDA_VISIBLE_DEVICES.
func taskExec(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("grid-task exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nodes := fs.String("nodes", "", "")
	var gpusOf []string
	fs.Func("gpus-of", "", func(s string) error { gpusOf = append(gpusOf, s); return nil })
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "clockgate grid-task exec: no command")
		return ExitUsage
	}
	node := taskNode()
	rank := -1
	for i, n := range strings.Split(*nodes, ",") {
		if n == node {
			rank = i
		}
	}
	if rank < 0 {
		fmt.Fprintf(stderr, "clockgate grid-task exec: this node, %s, is not among the role's nodes %s\n", node, *nodes)
		return ExitStopped
	}
	argv = Expand(argv, map[string]string{"node": node, "node_rank": strconv.Itoa(rank)})
	env := os.Environ()
	for _, g := range gpusOf {
		if n, u, ok := strings.Cut(g, "="); ok && n == node {
			env = append(env, sampler.EnvCUDAVisibleDevices+"="+u)
		}
	}
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "clockgate grid-task exec on %s: cannot run %s: %v\n", node, argv[0], err)
		return 127
	}
	err = syscall.Exec(bin, argv, env)
	fmt.Fprintf(stderr, "clockgate grid-task exec on %s: %s: %v\n", node, bin, errors.Unwrap(err))
	return 126
}

// taskSample runs clockgate sample --leg on this node with the leg's own
// processes named: every process here whose environment carries the
// leg's marker (its server's tasks and their workers) is an --engine-pid,
// so none of them is a foreign process on this node's GPUs.
func taskSample(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("grid-task sample", flag.ContinueOnError)
	fs.SetOutput(stderr)
	marker := fs.String("marker", "", "")
	if err := fs.Parse(args); err != nil || *marker == "" || len(fs.Args()) == 0 {
		fmt.Fprintln(stderr, "clockgate grid-task sample: want --marker KEY=VALUE -- SAMPLE-ARGS")
		return ExitUsage
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "clockgate grid-task sample: %v\n", err)
		return ExitStopped
	}
	argv := append([]string{exe}, fs.Args()...)
	if pids := SystemProcs().Marked(*marker, nil); len(pids) > 0 {
		s := make([]string, len(pids))
		for i, p := range pids {
			s[i] = strconv.Itoa(p)
		}
		argv = append(argv, "--engine-pid", strings.Join(s, ","))
	}
	err = syscall.Exec(exe, argv, os.Environ())
	fmt.Fprintf(stderr, "clockgate grid-task sample: %s: %v\n", exe, err)
	return 126
}
