package history

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium finds a headless Chromium, or skips; CLOCKGATE_REQUIRE_BROWSER=1
// (CI) makes a missing one a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CLOCKGATE_REQUIRE_BROWSER") == "1" {
		t.Fatal("no chromium on PATH, and CLOCKGATE_REQUIRE_BROWSER=1 requires the browser check of history.html")
	}
	t.Skip("no chromium on PATH: the browser check of history.html is skipped")
	return ""
}

func browse(t *testing.T, bin, file string, flags ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0", "--hide-scrollbars"}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+file)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String()
}

var consoleErrors = regexp.MustCompile(`(?m)^.*(CONSOLE.*(Uncaught|[Ee]rror|Refused)|Uncaught |Refused to ).*$`)

// TestHistoryHTMLInBrowser renders the code-regression history in
// headless Chromium: no console error; the DOM after load holds one trend
// picture per series, each established value filled and each NOT
// ESTABLISHED one hollow, the 18 change points marked; and the screenshot
// shows the three colours.
func TestHistoryHTMLInBrowser(t *testing.T) {
	bin := chromium(t)
	r := scenarioReport(t, "code-regression")
	var b bytes.Buffer
	if err := r.HTML(&b); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "history.html")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, stderr := browse(t, bin, file, "--dump-dom")
	if m := consoleErrors.FindAllString(stderr, -1); len(m) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(m, "\n"))
	}
	if got := strings.Count(dom, `class="trend"`); got != len(r.Series) {
		t.Errorf("%d trend pictures, want %d", got, len(r.Series))
	}
	established, hollow := 0, 0
	for _, s := range r.Series {
		n := s.establishedCount()
		established += n
		hollow += len(s.Points) - n
	}
	if got := strings.Count(dom, `class="established"`); got != established {
		t.Errorf("%d filled points, want %d", got, established)
	}
	if got := strings.Count(dom, `class="not-established"`); got != hollow || hollow == 0 {
		t.Errorf("%d hollow points, want %d", got, hollow)
	}
	if got := strings.Count(dom, `class="change"`); got != 18 {
		t.Errorf("%d change marks, want 18", got)
	}
	shot := filepath.Join(t.TempDir(), "history.png")
	browse(t, bin, file, "--screenshot="+shot, "--window-size=1000,3000")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]int{}
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := [3]int{int(r >> 8), int(g >> 8), int(bl >> 8)}
			for name, want := range map[string][3]int{"established": {0x1f, 0x5f, 0xa8}, "not established": {0xc0, 0x39, 0x2b}, "change": {0xe6, 0x7e, 0x22}} {
				if abs(c[0]-want[0]) < 24 && abs(c[1]-want[1]) < 24 && abs(c[2]-want[2]) < 24 {
					found[name]++
				}
			}
		}
	}
	for _, name := range []string{"established", "not established", "change"} {
		if found[name] < 50 {
			t.Errorf("the screenshot has %d pixels of the %s colour", found[name], name)
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
