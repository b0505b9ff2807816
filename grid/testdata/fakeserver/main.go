// Command fakeserver stands in for an inference server in the grid's
// tests. It listens on 127.0.0.1:PORT and answers GET /health with 503
// until -ready-after has passed, then 200. It starts a worker child in its
// own process group, and a worker that escapes a naive tree walk (a double
// fork and setsid: its parent exits at once, so it is reparented to the
// nearest subreaper, the grid). Each process appends "ROLE PID" to -pids
// and, as a GPU process, "PID, fakeserver-ROLE, UUID" to -compute (the fake
// nvidia-smi's compute_apps file, listed while the process lives).
//
// Modes: normal; ignore-term (the server and its worker ignore SIGTERM);
// crash (25 lines of output, then exit 3 before it is ready);
// crash-once (crash when -state does not exist yet, creating it);
// bind-late (record itself, wait for -state to exist, then bind: a
// server that dies at bind when another process took the port first).
// ignore-int (the server and its workers ignore SIGINT and SIGTERM: a
// Slurm step that only SIGKILL ends).
// On a Slurm node (the grid's [slurm] tests): -node NODE takes the fake
// nvidia-smi's GPU 0 of NODE as its GPU, -no-escape starts no escaping
// worker, -no-listen serves nothing (a decode role beside the head's).
// Every process exits by itself after -max-life, so a fake that a test
// failed to kill still goes away.
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	port := flag.Int("port", 0, "port")
	mode := flag.String("mode", "normal", "normal, ignore-term, crash, crash-once, bind-late")
	readyAfter := flag.Duration("ready-after", 300*time.Millisecond, "503 until then")
	pids := flag.String("pids", "", "file to append ROLE PID to")
	compute := flag.String("compute", "", "compute_apps file to append to")
	uuid := flag.String("uuid", "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30", "GPU UUID")
	state := flag.String("state", "", "crash-once state file")
	role := flag.String("role", "server", "server, worker, escape-parent, escaped")
	maxLife := flag.Duration("max-life", 120*time.Second, "exit after this long")
	node := flag.String("node", "", "the Slurm node whose fake GPU 0 this server uses")
	noEscape := flag.Bool("no-escape", false, "start no escaping worker")
	noListen := flag.Bool("no-listen", false, "serve nothing")
	flag.Parse()
	if *node != "" {
		// The fake nvidia-smi's UUID of GPU 0 on that node.
		h := fnv.New32a()
		h.Write([]byte(*node))
		*uuid = fmt.Sprintf("GPU-7f3a9c2e-5b1d-4e8f-a6c4-%08x%04x", h.Sum32(), 0)
	}

	go func() {
		time.Sleep(*maxLife)
		os.Exit(0)
	}()
	record := func() {
		appendLine(*pids, fmt.Sprintf("%s %d", *role, os.Getpid()))
		if *role != "escape-parent" {
			appendLine(*compute, fmt.Sprintf("%d, fakeserver-%s, %s", os.Getpid(), *role, *uuid))
		}
	}
	if *mode == "ignore-term" {
		signal.Ignore(syscall.SIGTERM)
	}
	if *mode == "ignore-int" {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
	}
	child := func(r string, setsid bool) {
		args := []string{"-role", r, "-mode", *mode, "-pids", *pids, "-compute", *compute, "-uuid", *uuid, "-max-life", maxLife.String()}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if setsid {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fakeserver:", err)
			os.Exit(98)
		}
		if r == "escaped" {
			// The escape-parent exits at once: the escaped worker is an
			// orphan, reparented.
			os.Exit(0)
		}
		go cmd.Wait()
	}
	switch *role {
	case "worker", "escaped":
		record()
		fmt.Printf("fakeserver %s %d: holding the GPU\n", *role, os.Getpid())
		select {}
	case "escape-parent":
		record()
		child("escaped", true)
		return
	}

	crash := *mode == "crash"
	if *mode == "crash-once" {
		if _, err := os.Stat(*state); err != nil {
			crash = true
			os.WriteFile(*state, []byte("crashed\n"), 0o644)
		}
	}
	if crash {
		for i := 1; i <= 25; i++ {
			fmt.Printf("fakeserver: loading line %d\n", i)
		}
		fmt.Println("fakeserver: CUDA error: out of memory (simulated)")
		os.Exit(3)
	}
	if *mode == "bind-late" {
		record()
		fmt.Println("fakeserver: loading, then binding once", *state, "exists")
		for {
			if _, err := os.Stat(*state); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if *noListen {
		record()
		child("worker", false)
		fmt.Printf("fakeserver: on %s, serving nothing\n", *node)
		select {}
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeserver:", err)
		os.Exit(97)
	}
	record()
	child("worker", false)
	if !*noEscape {
		child("escape-parent", false)
	}
	start := time.Now()
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		if time.Since(start) < *readyAfter {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	fmt.Printf("fakeserver: listening on %s\n", l.Addr())
	sigc := make(chan os.Signal, 1)
	if *mode != "ignore-term" {
		signal.Notify(sigc, syscall.SIGTERM)
	}
	go func() {
		<-sigc
		fmt.Println("fakeserver: SIGTERM, shutting down")
		os.Exit(0)
	}()
	http.Serve(l, mux)
}

func appendLine(path, line string) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	f.Write([]byte(line + "\n"))
	f.Close()
}
