package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// buildBinary builds cmd/clockgate with CGO_ENABLED=0 and the given tags
// into dir, and returns its path and everything the go command printed.
func buildBinary(t *testing.T, dir, tags string) (string, string) {
	t.Helper()
	bin := filepath.Join(dir, "clockgate")
	cmd := exec.Command("go", "build", "-tags", tags, "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin, string(out)
}

// TestBinaryWithoutCgo: the binary a GPU box gets is built without cgo and
// prints nothing while building. With NVML it asks the system for nothing
// but the C library's loader (libnvidia-ml.so.1 is loaded at run time,
// never linked); with the nonvml tag it is fully static. And the binary
// built without cgo reads NVML: run against a compiled stand-in for
// libnvidia-ml.so.1 found through LD_LIBRARY_PATH, --backend nvml records a
// leg.
func TestBinaryWithoutCgo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds clockgate twice")
	}
	if runtime.GOOS != "linux" {
		t.Skip("NVML is loaded on Linux only")
	}
	dir := t.TempDir()
	bin, out := buildBinary(t, dir, "")
	if out != "" {
		t.Errorf("CGO_ENABLED=0 go build printed:\n%s", out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	libs, err := f.ImportedLibraries()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		switch l {
		case "libc.so.6", "libdl.so.2", "libpthread.so.0":
		default:
			t.Errorf("the binary needs %s (all it needs: %v)", l, libs)
		}
	}

	staticDir := t.TempDir()
	static, _ := buildBinary(t, staticDir, "nonvml")
	f, err = elf.Open(static)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the nonvml binary is not static: it has %v", p.Type)
		}
	}
	f.Close()

	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the NVML part compiles a fake libnvidia-ml.so.1 and needs a C compiler")
	}
	libDir := t.TempDir()
	src, _ := filepath.Abs("../../sampler/testdata/fakenvml/fakenvml.c")
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", filepath.Join(libDir, "libnvidia-ml.so.1"), src).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	boot := filepath.Join(dir, "boot_id")
	os.WriteFile(boot, []byte(recBoot+"\n"), 0o644)
	prefix := filepath.Join(dir, "leg", "r1")
	run := exec.Command(bin, "sample", "--out", prefix, "--backend", "nvml", "--gpu", "1", "--interval", "100ms", "--max-duration", "350ms")
	run.Env = append(os.Environ(), "LD_LIBRARY_PATH="+libDir, bootIDFileEnv+"="+boot)
	out2, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out2)
	}
	if !strings.Contains(string(out2), "clockgate sample: sampling NVML GPU 1, throttle field clocks_event_reasons.active") {
		t.Errorf("output:\n%s", out2)
	}
	data, err := os.ReadFile(prefix + ".samples.jsonl")
	if err != nil || !strings.Contains(string(data), `"gpu_uuid":"GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31"`) || !strings.Contains(string(data), `"sm_clock_mhz":1740`) {
		t.Errorf("stream (%v):\n%s", err, data)
	}

	// Without the library, auto falls back to nvidia-smi; nvml refuses.
	run = exec.Command(static, "sample", "--out", filepath.Join(dir, "leg", "r2"), "--backend", "nvml")
	run.Env = append(os.Environ(), bootIDFileEnv+"="+boot)
	out3, err := run.CombinedOutput()
	if err == nil || !strings.Contains(string(out3), "clockgate: NVML unavailable: this clockgate was built without NVML (the nonvml tag") {
		t.Errorf("nonvml binary with --backend nvml: %v\n%s", err, out3)
	}
}
