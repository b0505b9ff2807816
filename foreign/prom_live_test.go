package foreign

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// TestPrometheusLive imports from a real Prometheus server (scripts/
// prometheus.sh; CLOCKGATE_TEST_PROMETHEUS its URL) that scrapes, every
// second, a stand-in exporter this test serves at
// CLOCKGATE_TEST_PROMETHEUS_EXPORTER: a real dcgm-exporter scrape of a
// Tesla T4, served for 8 s, refused for 8 s, served for 8 s again. The
// import reads the raw scrapes with an instant query of a range selector,
// so the refused stretch stays a gap: no sample falls in it, and the leg
// is clock.coverage. Skipped without the server, unless
// CLOCKGATE_REQUIRE_PROMETHEUS=1 (CI).
func TestPrometheusLive(t *testing.T) {
	url, addr := os.Getenv("CLOCKGATE_TEST_PROMETHEUS"), os.Getenv("CLOCKGATE_TEST_PROMETHEUS_EXPORTER")
	if url == "" || addr == "" {
		if os.Getenv("CLOCKGATE_REQUIRE_PROMETHEUS") == "1" {
			t.Fatal("CLOCKGATE_REQUIRE_PROMETHEUS=1, but CLOCKGATE_TEST_PROMETHEUS or CLOCKGATE_TEST_PROMETHEUS_EXPORTER is not set (scripts/prometheus.sh start)")
		}
		t.Skip("no Prometheus server: set CLOCKGATE_TEST_PROMETHEUS=$(scripts/prometheus.sh start) and CLOCKGATE_TEST_PROMETHEUS_EXPORTER=127.0.0.1:19479")
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("the stand-in exporter listens on loopback only, not %s", addr)
	}
	scrape, err := os.ReadFile(filepath.Join("..", "testdata", "foreign-real", "dcgm-exporter", "t4-scrape.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var serving atomic.Bool
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !serving.Load() {
			http.Error(w, "gap", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(scrape)
		// As node_exporter on the same node would serve it.
		w.Write([]byte("# TYPE node_boot_time_seconds gauge\nnode_boot_time_seconds 1.7844e+09\n"))
	})}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())

	const stretch = 8 * time.Second
	from := time.Now().UTC()
	serving.Store(true)
	time.Sleep(stretch)
	serving.Store(false)
	gapFrom := time.Now().UTC()
	time.Sleep(stretch)
	gapTo := time.Now().UTC()
	serving.Store(true)
	time.Sleep(stretch)
	to := time.Now().UTC()
	time.Sleep(2 * time.Second) // the last scrape lands

	o := Options{From: from, To: to, BusyAboveMHz: 200, NodeInstance: addr, Given: map[string]string{"prometheus": url},
		Host: "ip-10-180-14-93.eu-central-1.compute.internal", GPU: "GPU-960adb66-4b24-7335-74f2-f334f2220a84"}
	in, query, err := QueryLive(url, &o, &http.Client{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(query, "s]") || strings.Contains(in.Path, "query_range") {
		t.Errorf("not an instant query of a range selector: %s", query)
	}
	res, err := ConvertLive(in, o)
	if err != nil {
		t.Fatalf("%v\nanswer: %.2000s", err, in.Data)
	}
	var times []time.Time
	for _, line := range strings.Split(strings.TrimSuffix(string(res.Stream), "\n"), "\n") {
		i := strings.Index(line, `"t":"`)
		ts, err := time.Parse(time.RFC3339Nano, line[i+5:i+29])
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, ts)
		// A scrape is read at most 1.5 s into the refused stretch (one in
		// flight when it began) and from 1.5 s before its end.
		if ts.After(gapFrom.Add(1500*time.Millisecond)) && ts.Before(gapTo.Add(-1500*time.Millisecond)) {
			t.Errorf("a sample at %s inside the gap %s..%s", ts.Format(time.RFC3339Nano), gapFrom.Format(time.RFC3339Nano), gapTo.Format(time.RFC3339Nano))
		}
	}
	if len(times) < 10 || len(times) > 20 {
		t.Errorf("%d samples over two 8 s stretches scraped every second", len(times))
	}
	var widest time.Duration
	for i := 1; i < len(times); i++ {
		widest = max(widest, times[i].Sub(times[i-1]))
	}
	if widest < 5*time.Second {
		t.Errorf("widest gap %v: the refused stretch did not stay a gap", widest)
	}
	leg := writeAndJudge(t, t.TempDir(), "r1", res)
	if got := reasonMap(leg)[clocks.CodeCoverage]; !strings.HasPrefix(got, "largest gap between samples ") {
		t.Errorf("coverage %q; reasons %v", got, leg.Reasons)
	}
	if res.Import.UnprovenWhy[clocks.CodeUnprovenCoverage] != "" {
		t.Errorf("raw scrapes read as query_range: %s", res.Import.UnprovenWhy[clocks.CodeUnprovenCoverage])
	}
	if want := `node_boot_time_seconds{instance="` + addr + `"} 1784400000`; res.Record.BootID != want {
		t.Errorf("boot id %q, want %q", res.Record.BootID, want)
	}
	g := res.Record.GPUs[0]
	if g.Name != "Tesla T4" || g.DriverVersion != "570.195.03" || g.UUID != "GPU-960adb66-4b24-7335-74f2-f334f2220a84" || *g.SMClockMHz.Max != 300 {
		t.Errorf("record GPU %+v", g)
	}
	t.Logf("%d samples from %s to %s, widest gap %v", len(times), times[0].Format(time.RFC3339Nano), times[len(times)-1].Format(time.RFC3339Nano), widest)
}
