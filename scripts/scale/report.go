package main

// The report part of the guard: report.html's size, headless Chromium's
// time to render it, and how many legs one picture draws one by one, on a
// tree of two arms of many legs each (past report.AggregateLegs).

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/report"
)

// reportResult is what the report part measured on one tree.
type reportResult struct {
	tree        string
	legs        int
	html, md    int64
	browser     string // "" when no Chromium was found
	render      time.Duration
	blank       time.Duration
	widest      string // the picture that draws the most legs one by one
	widestLegs  int
	renderNotes string
}

// reportBounds are the report part's bounds: report.html's size, the time
// Chromium takes to render it beyond its time for a blank page, and the
// most legs one picture may draw one by one.
type reportBounds struct {
	MaxMB       float64
	MaxRenderS  float64
	MaxLegsDraw int
}

// shortReportBounds are -short's, on two arms of 1,000 legs × 60 samples.
// Aggregated, that tree's report.html is about 0.3 MB and renders in
// about 0.5 s beyond a blank page on a quiet 2-core machine; drawn leg by
// leg it was 5.6 MB. 1 MB holds three times the aggregated page and fails
// one that draws every leg; 3 s is the render bound at 20,000
// legs; a picture may draw report.AggregateLegs legs one by one, no more.
var shortReportBounds = reportBounds{MaxMB: 1, MaxRenderS: 3, MaxLegsDraw: report.AggregateLegs}

// check returns a message for every measurement past a bound.
func (b reportBounds) check(r reportResult) []string {
	var bad []string
	if mb := float64(r.html) / 1e6; b.MaxMB > 0 && mb > b.MaxMB {
		bad = append(bad, fmt.Sprintf("%s: report.html is %.2f MB; the bound is %.2f MB", r.tree, mb, b.MaxMB))
	}
	if net := (r.render - r.blank).Seconds(); b.MaxRenderS > 0 && r.browser != "" && net > b.MaxRenderS {
		bad = append(bad, fmt.Sprintf("%s: headless Chromium rendered report.html in %.2f s beyond a blank page's %.2f s; the bound is %.2f s",
			r.tree, net, r.blank.Seconds(), b.MaxRenderS))
	}
	if b.MaxLegsDraw > 0 && r.widestLegs > b.MaxLegsDraw {
		bad = append(bad, fmt.Sprintf("%s: picture %s draws %d legs one by one; the bound is %d (an arm of more legs is drawn aggregated)",
			r.tree, r.widest, r.widestLegs, b.MaxLegsDraw))
	}
	return bad
}

var (
	svgOpen  = regexp.MustCompile(`<figure[^>]* id="([^"]+)"[^>]*>\s*<svg [^>]*class="(clock|spread)[ "]`)
	rowOpen  = regexp.MustCompile(`<g class="row" id="([^"]+)">`)
	legGroup = `<g class="leg"`
	legDot   = `<circle class="leg"`
)

// widestPicture is the picture of report.html that draws the most legs
// one by one, and how many: a clock picture's legs, or a spread row's
// dots of its two arms, halved (one arm's worth, rounded up).
func widestPicture(html string) (id string, legs int) {
	locs := svgOpen.FindAllStringSubmatchIndex(html, -1)
	for k, loc := range locs {
		end := len(html)
		if k+1 < len(locs) {
			end = locs[k+1][0]
		}
		if e := strings.Index(html[loc[1]:end], "</svg>"); e >= 0 {
			end = loc[1] + e
		}
		body, fig, class := html[loc[1]:end], html[loc[2]:loc[3]], html[loc[4]:loc[5]]
		if class == "clock" {
			if n := strings.Count(body, legGroup); n > legs {
				id, legs = fig, n
			}
			continue
		}
		rows := rowOpen.FindAllStringSubmatchIndex(body, -1)
		for j, r := range rows {
			rend := len(body)
			if j+1 < len(rows) {
				rend = rows[j+1][0]
			}
			if n := (strings.Count(body[r[1]:rend], legDot) + 1) / 2; n > legs {
				id, legs = body[r[2]:r[3]], n
			}
		}
	}
	return id, legs
}

// twoArms writes tree again as one model of two arms, every leg of the
// tree's models renumbered into its engine's arm (model-KK's run N becomes
// run KK×perArm+N), the files linked; the generator writes perArm legs an
// arm. A leg's files name their model and run only in their paths.
func twoArms(tree string, perArm int) string {
	out := tree + "-2arms"
	if _, err := os.Stat(out); err == nil {
		return out
	}
	fmt.Fprintf(os.Stderr, "linking %s's legs into two arms in %s\n", tree, out)
	check(filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) < 4 || !strings.HasPrefix(parts[1], "model-") || !strings.HasPrefix(parts[3], "r") {
			return fmt.Errorf("%s: not a generated leg's file", rel)
		}
		model, err := strconv.Atoi(strings.TrimPrefix(parts[1], "model-"))
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		digits := strings.TrimLeft(parts[3][1:], "0123456789")
		run, err := strconv.Atoi(parts[3][1 : len(parts[3])-len(digits)])
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		parts[1], parts[3] = "model-00", fmt.Sprintf("r%d%s", model*perArm+run, digits)
		dst := filepath.Join(out, filepath.FromSlash(strings.Join(parts, "/")))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.Link(p, dst)
	}))
	return out
}

// findChromium is the headless browser the report's browser test uses.
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// renderTime is the wall time headless Chromium takes to load, lay out and
// paint file (a screenshot of 1280 × 2400), as the report's browser test
// runs it.
func renderTime(bin, file, dir string) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	defer cancel()
	profile, err := os.MkdirTemp(dir, "chromium-*")
	check(err)
	defer os.RemoveAll(profile)
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir="+profile, "--screenshot="+filepath.Join(profile, "shot.png"), "--window-size=1280,2400", "file://"+file)
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		check(fmt.Errorf("chromium %s: %v (timed out: %v)\n%s", file, err, ctx.Err() != nil, out))
	}
	return time.Since(start)
}

// measureReport writes the report of tree (summarize --out) and measures
// it: sizes, the widest picture, and, where Chromium is installed, its
// render time against a blank page's, the median of runs each.
func measureReport(bin, dir, tree, name string, legs, runs int) reportResult {
	out := tree + "-report"
	os.RemoveAll(out)
	measure([]string{bin, "summarize", "--out", out, tree})
	defer os.RemoveAll(out)
	r := reportResult{tree: name, legs: legs}
	htmlPath := filepath.Join(out, "report.html")
	html, err := os.ReadFile(htmlPath)
	check(err)
	md, err := os.Stat(filepath.Join(out, "report.md"))
	check(err)
	r.html, r.md = int64(len(html)), md.Size()
	r.widest, r.widestLegs = widestPicture(string(html))
	r.browser = findChromium()
	if r.browser == "" {
		if os.Getenv("CLOCKGATE_REQUIRE_BROWSER") == "1" {
			check(fmt.Errorf("no chromium on PATH, and CLOCKGATE_REQUIRE_BROWSER=1 requires the report's render time (apt-get install chromium)"))
		}
		r.renderNotes = "no chromium on PATH: render time not measured"
		return r
	}
	blank := filepath.Join(dir, "blank.html")
	check(os.WriteFile(blank, []byte("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\" /><title>blank</title></head><body><p>blank</p></body></html>\n"), 0o644))
	var rs, bs []time.Duration
	for range max(1, runs) {
		bs = append(bs, renderTime(r.browser, blank, dir))
		rs = append(rs, renderTime(r.browser, htmlPath, dir))
	}
	r.render, r.blank = median(rs), median(bs)
	return r
}

// printReport prints the report part's table.
func printReport(r reportResult) {
	fmt.Println("\n| tree | report.html | report.md | widest picture | Chromium render | blank page | render beyond blank |")
	fmt.Println("|---|---:|---:|---|---:|---:|---:|")
	render, blank, net := "–", "–", "–"
	if r.browser != "" {
		render, blank, net = fmt.Sprintf("%.2f s", r.render.Seconds()), fmt.Sprintf("%.2f s", r.blank.Seconds()), fmt.Sprintf("%.2f s", (r.render-r.blank).Seconds())
	}
	fmt.Printf("| %s | %.2f MB | %.2f MB | %s: %d legs one by one | %s | %s | %s |\n", r.tree, float64(r.html)/1e6, float64(r.md)/1e6,
		cmpOr(r.widest, "none"), r.widestLegs, render, blank, net)
	if r.renderNotes != "" {
		fmt.Println(r.renderNotes)
	}
}

func cmpOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// median is the middle of ds.
func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
