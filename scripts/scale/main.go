// Command scale measures clockgate summarize against the floor of reading
// the same bytes: it generates synthetic trees with the project's own
// generator, warms the page cache, then times, in one run and side by side,
// `cat` of every file of a tree into /dev/null and `clockgate summarize` of
// it, several times each, and prints a table of medians, ratios, peak RSS
// and CPU use.
//
//	go run ./scripts/scale                      # 400 legs × 3,600 samples, and × 7,200
//	go run ./scripts/scale -legs 40 -runs 3     # a quick look
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	legs := flag.Int("legs", 400, "legs per tree")
	samples := flag.Int("samples", 3600, "clock samples per leg of the first tree; the second has twice as many")
	runs := flag.Int("runs", 5, "timed runs of each command per tree")
	work := flag.String("work", "", "directory for the trees and binary (default: a temporary one, removed after)")
	flag.Parse()

	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "clockgate-scale-*")
		check(err)
		defer os.RemoveAll(d)
		dir = d
	}
	bin := filepath.Join(dir, "clockgate")
	run("go", "build", "-o", bin, "./cmd/clockgate")

	type result struct {
		name                    string
		bytes                   int64
		files                   int
		cat, sum, cpu           time.Duration
		rss                     int64
		ratio, cores, perSample float64
	}
	var results []result
	for _, n := range []int{*samples, 2 * *samples} {
		tree := filepath.Join(dir, fmt.Sprintf("tree-%dx%d", *legs, n))
		if _, err := os.Stat(tree); err != nil {
			fmt.Fprintf(os.Stderr, "generating %d legs × %d samples into %s\n", *legs, n, tree)
			run("go", "run", "./summarize/internal/treegen/cmd/treegen", "-out", tree,
				"-legs", fmt.Sprint(*legs), "-samples", fmt.Sprint(n))
		}
		files, size := listFiles(tree)
		catArgs := append([]string{"cat"}, files...)
		// Warm the cache, then alternate the two commands so both see the
		// same machine.
		measure(catArgs)
		measure([]string{bin, "summarize", tree})
		var cats, sums, cpus []time.Duration
		var rss int64
		for i := 0; i < *runs; i++ {
			c := measure(catArgs)
			s := measure([]string{bin, "summarize", tree})
			cats, sums, cpus = append(cats, c.wall), append(sums, s.wall), append(cpus, s.cpu)
			rss = max(rss, s.maxRSS)
		}
		r := result{name: fmt.Sprintf("%d legs × %d samples", *legs, n), bytes: size, files: len(files),
			cat: median(cats), sum: median(sums), cpu: median(cpus), rss: rss}
		r.ratio = r.sum.Seconds() / r.cat.Seconds()
		r.cores = r.cpu.Seconds() / r.sum.Seconds()
		results = append(results, r)
	}
	small := make([]time.Duration, 0, *runs)
	for i := 0; i < *runs+1; i++ {
		m := measure([]string{bin, "summarize", "testdata/trees/clean-grid"})
		if i > 0 {
			small = append(small, m.wall)
		}
	}

	fmt.Printf("machine: %d cores (GOMAXPROCS %d), %s/%s, %s; median of %d runs, warm cache\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, cpuName(), *runs)
	fmt.Println("| tree | files | bytes | cat (floor) | clockgate summarize | ratio | cores used | peak RSS |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Printf("| %s | %d | %.0f MiB | %.3f s | %.3f s | %.2f× | %.2f | %.1f MiB |\n",
			r.name, r.files, float64(r.bytes)/(1<<20), r.cat.Seconds(), r.sum.Seconds(), r.ratio, r.cores, float64(r.rss)/1024)
	}
	if len(results) == 2 {
		fmt.Printf("\ndoubling the samples costs %.2f× the time (cat: %.2f×)\n",
			results[1].sum.Seconds()/results[0].sum.Seconds(), results[1].cat.Seconds()/results[0].cat.Seconds())
	}
	fmt.Printf("the shipped clean grid (testdata/trees/clean-grid) summarizes in %.1f ms\n", float64(median(small).Microseconds())/1000)
}

type measurement struct {
	wall, cpu time.Duration
	maxRSS    int64 // KiB
}

func measure(args []string) measurement {
	cmd := exec.Command(args[0], args[1:]...)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	check(err)
	defer devnull.Close()
	cmd.Stdout, cmd.Stderr = devnull, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		// summarize exits 0 on a judged tree; anything else is a failure here.
		check(fmt.Errorf("%s: %w", strings.Join(args[:min(len(args), 3)], " "), err))
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return measurement{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), maxRSS: ru.Maxrss}
}

func listFiles(root string) ([]string, int64) {
	var files []string
	var size int64
	check(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files, size = append(files, p), size+info.Size()
		return nil
	}))
	sort.Strings(files)
	return files, size
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return "unknown CPU"
}

func run(name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	check(cmd.Run())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}
