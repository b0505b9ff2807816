package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/clockgate/clockgate/report"
	"github.com/clockgate/clockgate/summarize"
)

func mem(what string) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Printf("%-20s heap in use %6.1f MiB\n", what, float64(m.HeapInuse)/(1<<20))
}

func main() {
	mem("start")
	s, err := summarize.Summarize(os.Args[1], summarize.Options{Baseline: "vllm", Traces: len(os.Args) > 2, Rows: summarize.DiscardRows})
	if err != nil {
		panic(err)
	}
	mem("summarized")
	if f, err := os.Create("/tmp/heap.prof"); err == nil {
		pprof.WriteHeapProfile(f)
		f.Close()
	}
	sj, _ := s.SummaryJSON()
	mem("summary.json")
	var md bytes.Buffer
	report.Markdown(&md, s)
	mem("report.md")
	if len(os.Args) > 2 {
		ar := 0
		var h bytes.Buffer
		report.HTML(&h, s)
		mem("report.html")
		_ = ar
	}
	_ = sj
}
