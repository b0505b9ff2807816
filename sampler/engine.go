package sampler

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/clockgate/clockgate/clocks"
)

// ErrEngine says a process named as the engine under test (--engine-pid,
// --engine-port) cannot be found or attributed: a usage error, reported
// before anything runs (SPEC §11.1).
var ErrEngine = errors.New("engine not found")

// MaxPort is the largest TCP port.
const MaxPort = 65535

// tcpListen is the state of a listening socket in /proc/net/tcp*.
const tcpListen = "0A"

// portForwarders are the processes that listen on a host port for a
// container: the engine behind them runs where this /proc cannot see it.
var portForwarders = map[string]bool{"docker-proxy": true, "rootlessport": true, "slirp4netns": true, "pasta": true, "conmon": true}

// ResolveEngines finds the engine's processes under the /proc at root
// (SPEC §11.1): each of pids must be running, and each of ports must have a
// listener that a process in root holds. The processes listening on one
// port are recorded as one engine each, the topmost of them only (a worker
// that inherited the server's socket is its descendant, and own through
// it). A pid named twice, or found by a port and also named, is recorded
// once, as first named. Errors wrap ErrEngine.
func ResolveEngines(root string, pids, ports []int) ([]clocks.Engine, error) {
	var out []clocks.Engine
	seen := map[int]bool{}
	add := func(pid int, how string) {
		if !seen[pid] {
			seen[pid] = true
			out = append(out, clocks.Engine{PID: pid, How: how})
		}
	}
	for _, pid := range pids {
		if err := engineRunning(root, pid); err != nil {
			return nil, err
		}
		add(pid, clocks.EnginePID)
	}
	for _, port := range ports {
		found, err := PortListeners(root, port)
		if err != nil {
			return nil, err
		}
		for _, pid := range found {
			add(pid, clocks.EnginePortPrefix+strconv.Itoa(port))
		}
	}
	return out, nil
}

// engineRunning refuses a pid that is not a running process: gone, or a
// zombie.
func engineRunning(root string, pid int) error {
	if pid <= 0 {
		return fmt.Errorf("--engine-pid %d: %w: want a process id > 0", pid, ErrEngine)
	}
	gone := fmt.Errorf("--engine-pid %d: %w: no process %d is running; start the engine first, then name its pid (pgrep -f 'vllm serve' finds it), or name its port with --engine-port", pid, ErrEngine, pid)
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return gone
	}
	data, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if errors.Is(err, fs.ErrNotExist) {
		return gone
	}
	if err == nil {
		if state, _, err := parseStat(data); err == nil && exited(state) {
			return fmt.Errorf("--engine-pid %d: %w: process %d has exited (a zombie); start the engine again and name the new pid", pid, ErrEngine, pid)
		}
	}
	return nil
}

// PortListeners returns the processes, under the /proc at root, that hold
// a socket listening on TCP port (IPv4 or IPv6, any address), topmost
// first: those whose parent does not hold one too. It refuses (ErrEngine)
// a port nobody listens on, a listener no process in root holds (a server
// in a container, or another user's whose file descriptors cannot be
// read), and a container's port forwarder.
func PortListeners(root string, port int) ([]int, error) {
	if port <= 0 || port > MaxPort {
		return nil, fmt.Errorf("--engine-port %d: %w: want a TCP port, 1 to %d", port, ErrEngine, MaxPort)
	}
	inodes := map[string]bool{}
	var read []string
	for _, name := range []string{"tcp", "tcp6"} {
		path := filepath.Join(root, "net", name)
		found, err := listeningInodes(path, port)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a kernel without IPv6
		}
		if err != nil {
			return nil, fmt.Errorf("--engine-port %d: %w: %v", port, ErrEngine, err)
		}
		read = append(read, path)
		for _, ino := range found {
			inodes[ino] = true
		}
	}
	if len(read) == 0 {
		return nil, fmt.Errorf("--engine-port %d: %w: neither %s nor %s can be read, so no listener can be found; name the engine with --engine-pid", port, ErrEngine, filepath.Join(root, "net", "tcp"), filepath.Join(root, "net", "tcp6"))
	}
	if len(inodes) == 0 {
		return nil, fmt.Errorf("--engine-port %d: %w: nothing listens on TCP port %d (read %s); start the server first and name the port it serves on, or name it with --engine-pid",
			port, ErrEngine, port, strings.Join(read, ", "))
	}
	holders, parent := socketHolders(root, inodes)
	if len(holders) == 0 {
		return nil, fmt.Errorf("--engine-port %d: %w: a socket listens on TCP port %d, but no process in %s holds it: the server runs in a container or another pid namespace, or as another user whose file descriptors cannot be read; run clockgate where the server's processes are visible, or name it with --engine-pid",
			port, ErrEngine, port, root)
	}
	var top []int
	for _, pid := range holders {
		if !containsInt(holders, parent[pid]) {
			top = append(top, pid)
		}
	}
	for _, pid := range top {
		comm, _ := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "comm"))
		if name := strings.TrimSpace(string(comm)); portForwarders[name] {
			return nil, fmt.Errorf("--engine-port %d: %w: TCP port %d is held by %s (pid %d), a container's port forwarder: the server runs in a container whose processes this /proc cannot attribute; run clockgate inside the container, or name the engine with --engine-pid as this /proc sees it",
				port, ErrEngine, port, name, pid)
		}
	}
	return top, nil
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// listeningInodes reads a /proc/net/tcp or tcp6 table: the socket inodes
// of the sockets in state LISTEN on port.
func listeningInodes(path string, port int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	want := fmt.Sprintf("%04X", port)
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		f := strings.Fields(sc.Text())
		if n == 1 && len(f) > 0 && f[0] == "sl" {
			continue // the header
		}
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		if len(f) < 10 {
			return nil, fmt.Errorf("%s:%d: want at least 10 fields, found %d", path, n, len(f))
		}
		local := f[1]
		k := strings.LastIndexByte(local, ':')
		if k < 0 {
			return nil, fmt.Errorf("%s:%d: local address %q has no port", path, n, local)
		}
		if f[3] == tcpListen && strings.EqualFold(local[k+1:], want) && f[9] != "0" {
			out = append(out, f[9])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return out, nil
}

// socketHolders returns the pids under root that hold one of the socket
// inodes as an open file, sorted, and every visible pid's parent.
func socketHolders(root string, inodes map[string]bool) ([]int, map[int]int) {
	parent := procTree(root)
	var holders []int
	for pid := range parent {
		dir := filepath.Join(root, strconv.Itoa(pid), "fd")
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or another user's
		}
		for _, e := range ents {
			link, err := os.Readlink(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			ino, ok := strings.CutPrefix(link, "socket:[")
			if ok && strings.HasSuffix(ino, "]") && inodes[strings.TrimSuffix(ino, "]")] {
				holders = append(holders, pid)
				break
			}
		}
	}
	sort.Ints(holders)
	return holders, parent
}
