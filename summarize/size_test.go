package summarize_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clockgate/clockgate/summarize"
)

// bigBenchBytes is the size of the detailed bench file the memory test
// reads: 200 MiB of per-request arrays, ten times what vLLM's 1000 prompts
// × 1024 tokens write.
const bigBenchBytes = 200 << 20

// maxExtraRSS bounds how much more memory summarizing a tree takes when
// one of its bench files is bigBenchBytes of arrays: the arrays are
// counted, never held.
const maxExtraRSS = 64 << 20

// TestBigDetailedBenchFile summarizes, in a child process each, the clean
// tree and the same tree with one leg's c8.json replaced by a 200 MiB
// detailed file (vLLM 0.6's arrays: 10,240 requests of 1,024 tokens), and
// compares the children's peak RSS: the big file may add at most 64 MiB.
// It writes 200 MiB and reads it once, so it runs only with
// CLOCKGATE_BIG=1 (.ci/run sets it).
func TestBigDetailedBenchFile(t *testing.T) {
	if os.Getenv("CLOCKGATE_BIG") == "" {
		t.Skip("writes and reads a 200 MiB file; run with CLOCKGATE_BIG=1 (.ci/run does)")
	}
	clean := corpusTree(t)
	big := linkTree(t, clean)
	target := filepath.Join(big, filepath.FromSlash(corpusTargets["bench"]))
	// The detailed file keeps the replaced point's date, so the result
	// still lies in its leg's clock window (SPEC §12.1.1).
	orig, err := os.ReadFile(target)
	must(t, err)
	date := regexp.MustCompile(`"date": "([0-9-]+)"`).FindSubmatch(orig)
	if date == nil {
		t.Fatalf("%s has no date", target)
	}
	must(t, os.Remove(target))
	requests, size := writeDetailed(t, target, string(date[1]))
	t.Logf("wrote %s: %d bytes, %d requests", target, size, requests)

	cleanRSS, _, cleanOut := summarizeChild(t, clean)
	bigRSS, elapsed, bigOut := summarizeChild(t, big)
	t.Logf("peak RSS: clean tree %.1f MiB, with the 200 MiB file %.1f MiB (%+.1f MiB); the run took %v",
		float64(cleanRSS)/(1<<20), float64(bigRSS)/(1<<20), float64(bigRSS-cleanRSS)/(1<<20), elapsed)
	if bigRSS-cleanRSS > maxExtraRSS {
		t.Errorf("peak RSS %d bytes with the big file, %d without: %d more, want at most %d", bigRSS, cleanRSS, bigRSS-cleanRSS, maxExtraRSS)
	}
	// The file was read, and kept as counts.
	for _, want := range []string{fmt.Sprintf("\"itls\": {\n            \"array_len\": %d\n          }", requests),
		`"vllm-legacy"`, "CODES []"} {
		if !strings.Contains(bigOut, want) {
			codes, _, _ := strings.Cut(bigOut[strings.Index(bigOut, "CODES")+1:], "\n")
			t.Errorf("the big tree's output lacks %s (its leg: C%s)", want, codes)
		}
	}
	if strings.Contains(cleanOut, "array_len") {
		t.Error("the clean tree has arrays")
	}
}

// writeDetailed writes, at path, the clean c8 point as vLLM 0.6 wrote it
// with its per-request arrays grown to bigBenchBytes.
func writeDetailed(t *testing.T, path, date string) (requests int, size int64) {
	t.Helper()
	f, err := os.Create(path)
	must(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	const tokens = 1024
	// One request's itls: 1,023 gaps of about 20 bytes each.
	var gaps strings.Builder
	for g := 0; g < tokens-1; g++ {
		if g > 0 {
			gaps.WriteString(", ")
		}
		gaps.WriteString(strconv.FormatFloat(0.0075+float64(g%97)*1e-6, 'f', -1, 64))
	}
	per := gaps.Len() + 4
	requests = bigBenchBytes / per
	fmt.Fprintf(w, `{"date": %q, "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct", `+
		`"best_of": 1, "use_beam_search": false, "num_prompts": 24, "request_rate": "inf", "max_concurrency": 8, "duration": 43.9, "completed": 24, `+
		`"total_input_tokens": 24576, "total_output_tokens": 3072, "request_throughput": 0.5466, "output_throughput": 69.95875980428646, `+
		`"total_token_throughput": 629.6, "input_lens": [`, date)
	list := func(n int, item string) {
		for i := 0; i < n; i++ {
			if i > 0 {
				w.WriteString(", ")
			}
			w.WriteString(item)
		}
	}
	list(requests, "1024")
	w.WriteString(`], "output_lens": [`)
	list(requests, "1024")
	w.WriteString(`], "ttfts": [`)
	list(requests, "0.15459472686052322")
	w.WriteString(`], "itls": [`)
	list(requests, "["+gaps.String()+"]")
	w.WriteString(`], "generated_texts": [`)
	list(requests, `"It\u2019s a great book."`)
	w.WriteString(`], "errors": [`)
	list(requests, `""`)
	w.WriteString(`], "mean_ttft_ms": 815.9, "median_ttft_ms": 815.9, "p99_ttft_ms": 1040.2, "mean_tpot_ms": 113.0, "median_tpot_ms": 113.0, "p99_tpot_ms": 124.3}`)
	must(t, w.Flush())
	st, err := f.Stat()
	must(t, err)
	must(t, f.Close())
	return requests, st.Size()
}

// summarizeChild runs this test binary's TestBigDetailedBenchFileHelper
// on root in a child process and returns the child's peak RSS in bytes,
// how long it ran, and what it printed.
func summarizeChild(t *testing.T, root string) (int64, time.Duration, string) {
	t.Helper()
	self, err := os.Executable()
	must(t, err)
	cmd := exec.Command(self, "-test.run=^TestBigDetailedBenchFileHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "CLOCKGATE_BIG_TREE="+root)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	elapsed := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this system")
	}
	return ru.Maxrss << 10, elapsed, out.String() // Maxrss is in KiB on Linux
}

// TestBigDetailedBenchFileHelper is the child of summarizeChild: it
// summarizes the tree and prints the leg's codes and all-runs.json.
func TestBigDetailedBenchFileHelper(t *testing.T) {
	root := os.Getenv("CLOCKGATE_BIG_TREE")
	if root == "" {
		t.Skip("run by TestBigDetailedBenchFile")
	}
	s, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm"})
	must(t, err)
	all, err := s.AllRunsJSON()
	must(t, err)
	l := legByKey(s, corpusLeg)
	fmt.Printf("CODES %v\n%s\n", l.Reasons, all)
}
