package main

import (
	"io"
	"os"
	"time"

	"github.com/clockgate/clockgate/report"
	"github.com/clockgate/clockgate/summarize"
)

func main() {
	for _, traces := range []bool{false, true, false, true} {
		t0 := time.Now()
		spool, _ := os.CreateTemp("", "x")
		os.Remove(spool.Name())
		var rows io.ReadWriteSeeker = summarize.DiscardRows
		if traces && len(os.Args) > 2 {
			rows = spool
		}
		s, err := summarize.Summarize(os.Args[1], summarize.Options{Baseline: "vllm", Traces: traces, Rows: rows})
		if err != nil {
			panic(err)
		}
		t1 := time.Now()
		doc := report.Build(s)
		s.WriteSummary(io.Discard)
		t2 := time.Now()
		if traces {
			s.WriteAllRuns(io.Discard)
		}
		t3 := time.Now()
		doc.Markdown(io.Discard)
		t4 := time.Now()
		if traces {
			doc.HTML(io.Discard)
		}
		t5 := time.Now()
		println("traces", traces, "summarize", t1.Sub(t0).String(), "summary", t2.Sub(t1).String(), "allruns", t3.Sub(t2).String(), "md", t4.Sub(t3).String(), "html", t5.Sub(t4).String())
		spool.Close()
	}
}
