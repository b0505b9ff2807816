package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium finds a headless Chromium, or skips the test; with
// CLOCKGATE_REQUIRE_BROWSER=1 (set by CI, which installs one) a missing
// browser fails it instead.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CLOCKGATE_REQUIRE_BROWSER") == "1" {
		t.Fatal("no chromium on PATH, and CLOCKGATE_REQUIRE_BROWSER=1 requires the browser check (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH: the browser check of report.html is skipped (apt-get install chromium; CLOCKGATE_REQUIRE_BROWSER=1 makes it required)")
	return ""
}

// browse runs headless Chromium on a file with extra flags and returns
// its stdout and stderr; the whole run is bounded in time.
func browse(t *testing.T, bin, file string, flags ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0", "--hide-scrollbars"}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+file)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v (timed out: %v)\n%s", err, ctx.Err() != nil, tail(errb.String()))
	}
	return out.String(), errb.String()
}

func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}

// consoleErrors are the lines of Chromium's log that report a script
// error, a console error or a refused load.
var consoleErrors = regexp.MustCompile(`(?m)^.*(CONSOLE.*(Uncaught|[Ee]rror|Refused)|Uncaught |Refused to ).*$`)

// TestHTMLInBrowser renders the staircase report in headless Chromium:
// the screenshot is not blank and shows both arms' traces, the verdict
// badge and the throttle-free grid in their colours; the page logs no
// console error; and the DOM after load still holds both pictures. A probe
// page with a script error first proves the console check can see one.
func TestHTMLInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()

	probe := filepath.Join(dir, "probe.html")
	if err := os.WriteFile(probe, []byte("<!DOCTYPE html><p>probe</p><script>undefinedFunction()</script>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr := browse(t, bin, probe, "--dump-dom"); !consoleErrors.MatchString(stderr) {
		t.Fatalf("a page with a script error logged no console error that the check can see:\n%s", tail(stderr))
	}

	html, _ := page(t, filepath.Join(treesDir, "staircase"), false)
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, html, 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	_, stderr := browse(t, bin, file, "--screenshot="+shot, "--window-size=1280,2400")
	if m := consoleErrors.FindAllString(stderr, -1); len(m) > 0 {
		t.Errorf("the page logged console errors:\n%s", strings.Join(m, "\n"))
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, tail(stderr))
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	checkScreenshot(t, img)

	dom, stderr := browse(t, bin, file, "--dump-dom")
	if m := consoleErrors.FindAllString(stderr, -1); len(m) > 0 {
		t.Errorf("the page logged console errors:\n%s", strings.Join(m, "\n"))
	}
	// Two clock pictures, and the legs' spread of each family.
	if got, spread := strings.Count(dom, "<svg "), strings.Count(dom, `<svg xmlns="http://www.w3.org/2000/svg" class="spread"`); got != 4 || spread != 2 {
		t.Errorf("the DOM after load holds %d SVGs, %d of the legs' spread; want 4 and 2", got, spread)
	}
	if !strings.Contains(dom, `<span class="badge not-established">NOT ESTABLISHED</span>`) {
		t.Error("the DOM after load lost the verdict badge")
	}
}

// checkScreenshot wants a page, not a blank: enough ink, many colours, and
// the colours of both arms' traces and of the NOT ESTABLISHED badge.
func checkScreenshot(t *testing.T, img image.Image) {
	t.Helper()
	b := img.Bounds()
	ink, total := 0, b.Dx()*b.Dy()
	colours := map[[3]uint8]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}
			if c != [3]uint8{255, 255, 255} {
				ink++
			}
			colours[[3]uint8{c[0] &^ 15, c[1] &^ 15, c[2] &^ 15}]++
		}
	}
	if ink < total/50 {
		t.Errorf("%d of %d pixels are not white: the page looks blank", ink, total)
	}
	distinct := 0
	for _, n := range colours {
		if n >= 20 {
			distinct++
		}
	}
	if distinct < 12 {
		t.Errorf("%d distinct colours (in 16-level bins, 20 pixels or more): the pictures did not render", distinct)
	}
	near := func(hex string) int {
		var want [3]int
		for i := range want {
			v := 0
			for _, ch := range hex[1+2*i : 3+2*i] {
				v = v*16 + strings.IndexRune("0123456789abcdef", ch)
			}
			want[i] = v
		}
		count := 0
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				d := abs(int(r>>8)-want[0]) + abs(int(g>>8)-want[1]) + abs(int(bl>>8)-want[2])
				if d <= 36 {
					count++
				}
			}
		}
		return count
	}
	for _, c := range []struct{ what, hex string }{
		{"the ours arm's trace", colourOurs},
		{"the baseline arm's trace", colourBaseline},
		{"the NOT ESTABLISHED badge", "#c62828"},
	} {
		if got := near(c.hex); got < 150 {
			t.Errorf("%d pixels in the colour of %s (%s); want it drawn", got, c.what, c.hex)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
