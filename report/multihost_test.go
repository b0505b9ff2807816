package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/summarize"
)

// TestMultiHostReportNamesHosts: the report of a multi-host tree
// (multihost-duplicate-uuid: prefill on node1, decode on node2 and node3)
// names each GPU by host and role, per host and per role where the
// single-host report names the GPU: in report.md's tables, in
// report.html's picture (a line and a key entry per host, each its own
// colour) and in the arm's line.
func TestMultiHostReportNamesHosts(t *testing.T) {
	s, err := summarize.Summarize("../testdata/trees/multihost-duplicate-uuid", summarize.Options{Baseline: "dynamo", Traces: true})
	if err != nil {
		t.Fatal(err)
	}
	var md, h bytes.Buffer
	if err := Markdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&h, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| node1/prefill 0 (GPU-4c1e9a27) |", "node3/decode 0 (GPU-a93f0d52) |", "node2/decode 0 |",
		"GPU position 2 (host node3, role decode, GPU 0): gpu_uuid"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	html := h.String()
	for _, want := range []string{">node1/prefill GPU 0</text>", ">node2/decode GPU 0</text>", ">node3/decode GPU 0</text>",
		`<title>r1 node3/decode GPU 0, busy median`, "3 GPUs per leg, the slowest GPU position "} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(html, "(GPU 0) at a merged median") {
		t.Error("report.html names a multi-host position's GPU without its host")
	}
	for _, c := range []string{gpuColour(0), gpuColour(1), gpuColour(2)} {
		if !strings.Contains(html, `stroke="`+c+`"`) {
			t.Errorf("report.html draws no line in %s: the hosts' GPUs share a colour", c)
		}
	}
}

// TestMultiHostReportHostTable: report.md gives a multi-host leg a table
// per host (SPEC §12.3): its role, GPUs, busy median, busy samples and the
// reasons that name it; a GPU claimed by two hosts is both hosts' reason,
// never the third's; a host that wrote no record has a row of dashes and
// clock.host_missing.
func TestMultiHostReportHostTable(t *testing.T) {
	s, err := summarize.Summarize("../testdata/trees/multihost-duplicate-uuid", summarize.Options{Baseline: "dynamo"})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(&md, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| engine       | run | host  | role    | GPUs | median MHz | busy | reasons              |",
		"| dynamo-rerun | r1  | node1 | prefill | 0    |       2468 |  179 | —                    |",
		"| dynamo-rerun | r1  | node2 | decode  | 0    |       2468 |  179 | clock.host_duplicate |",
		"| dynamo-rerun | r1  | node3 | decode  | 0    |       2468 |  179 | clock.host_duplicate |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks the host row %q:\n%s", want, md.String())
		}
	}

	tree := t.TempDir()
	if err := os.CopyFS(tree, os.DirFS("../testdata/trees/multihost-aa")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(tree, "clocks", "llama-3.1-8b-instruct", "dynamo", "r1", "hosts", "node2.summary.json")); err != nil {
		t.Fatal(err)
	}
	if s, err = summarize.Summarize(tree, summarize.Options{Baseline: "dynamo"}); err != nil {
		t.Fatal(err)
	}
	md.Reset()
	if err := Markdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if want := "| dynamo       | r1  | node2 | decode  | —    |          — |    — | clock.host_missing |"; !strings.Contains(md.String(), want) {
		t.Errorf("report.md lacks the missing host's row %q:\n%s", want, md.String())
	}
}

// TestMultiHostReportHostPictures: report.html gives a multi-host leg one
// clock picture per host and arm (SPEC §12.3), titled by host and role,
// each drawing that host's GPU only; a host without a record is drawn as a
// slot without a trace; and the per-host table is in the page.
func TestMultiHostReportHostPictures(t *testing.T) {
	tree := t.TempDir()
	if err := os.CopyFS(tree, os.DirFS("../testdata/trees/multihost-aa")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(tree, "clocks", "llama-3.1-8b-instruct", "dynamo", "r1", "hosts", "node2.summary.json")); err != nil {
		t.Fatal(err)
	}
	s, err := summarize.Summarize(tree, summarize.Options{Baseline: "dynamo", Traces: true})
	if err != nil {
		t.Fatal(err)
	}
	var h bytes.Buffer
	if err := HTML(&h, s); err != nil {
		t.Fatal(err)
	}
	html := h.String()
	for k, host := range []string{"host node1, role prefill", "host node2, role decode", "host node3, role decode"} {
		for _, arm := range []string{"ours", "baseline"} {
			id := fmt.Sprintf(`<figure id="c1-%s-host%d">`, arm, k+1)
			i := strings.Index(html, id)
			if i < 0 {
				t.Errorf("report.html has no picture %s of %s", id, host)
				continue
			}
			fig, _, _ := strings.Cut(html[i:], "</figure>")
			if !strings.Contains(fig, "<title>"+host+": ") || !strings.Contains(fig, "<figcaption>"+host+", drawn alone") {
				t.Errorf("picture %s is not titled %q", id, host)
			}
			for j, other := range []string{"node1", "node2", "node3"} {
				if j != k && strings.Contains(fig, ">"+other+"/") {
					t.Errorf("picture %s of %s draws %s's GPU", id, host, other)
				}
			}
		}
	}
	if !strings.Contains(html, `<th align="left">host</th>`) || !strings.Contains(html, "clock.host_missing") {
		t.Error("report.html lacks the per-host table")
	}
}
