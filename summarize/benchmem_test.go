package summarize

import "testing"

func TestParseMemory(t *testing.T) {
	const rel = "memory/m/e/r1.summary.json"
	m, msg := parseMemory(rel, []byte(`{"peak_gpu_memory_mib": 71234.0, "peak_host_rss_mib": 5120.5, "n": 312}`))
	if msg != "" || m.PeakGPUMemoryMiB != 71234 || m.N != 312 {
		t.Fatalf("%+v, %q", m, msg)
	}
	// A host RSS not recorded (null: an imported leg, SPEC §12.1) is read
	// as such, the GPU peak kept; all-runs.json keeps the null.
	m, msg = parseMemory(rel, []byte(`{"peak_gpu_memory_mib": 74940, "peak_host_rss_mib": null, "n": 5}`))
	if msg != "" || m.PeakGPUMemoryMiB != 74940 || m.N != 5 || m.Raw["peak_host_rss_mib"] != nil {
		t.Fatalf("null host RSS: %+v, %q", m, msg)
	}
	if _, kept := m.Raw["peak_host_rss_mib"]; !kept {
		t.Errorf("null host RSS dropped from the raw record: %v", m.Raw)
	}
	cases := []struct{ data, want string }{
		{`{"peak_gpu_memory_mib": 0, "n": 312}`, rel + ": peak_gpu_memory_mib: want a finite number > 0 MiB, found number 0"},
		{`{"peak_gpu_memory_mib": -1.5, "n": 312}`, rel + ": peak_gpu_memory_mib: want a finite number > 0 MiB, found number -1.5"},
		{`{"peak_gpu_memory_mib": "71234", "n": 312}`, rel + `: peak_gpu_memory_mib: want a finite number > 0 MiB, found string "71234"`},
		{`{"n": 312}`, rel + ": peak_gpu_memory_mib: want a finite number > 0 MiB, found nothing (key missing)"},
		{`{"peak_gpu_memory_mib": 71234.0, "n": 0}`, rel + ": n: want an integer from 1 to 2^40 (1099511627776), found number 0"},
		{`{"peak_gpu_memory_mib": 71234.0, "n": 312.5}`, rel + ": n: want an integer from 1 to 2^40 (1099511627776), found number 312.5"},
		{`{"peak_gpu_memory_mib": 71234.0}`, rel + ": n: want an integer from 1 to 2^40 (1099511627776), found nothing (key missing)"},
		{`{"peak_gpu_memory_mib": 71234.0, "n": 3, "peak_host_rss_mib": "5120"}`, rel + `: peak_host_rss_mib: want a finite number ≥ 0 MiB, or null where not recorded, found string "5120"`},
	}
	// Each message says what to do: a wrong key is the sampler's to fix.
	for _, c := range cases {
		m, msg := parseMemory(rel, []byte(c.data))
		if want := c.want + "; " + hintMemValue; m != nil || msg != want {
			t.Errorf("%s:\n got %q\nwant %q", c.data, msg, want)
		}
	}
	// Not strict JSON: restore the record, or make the sampler write it.
	for data, want := range map[string]string{
		`{"peak_gpu_memory_mib": NaN, "n": 312}`:                 rel + ":1: unexpected 'N': NaN and Infinity are not JSON numbers",
		`{"peak_gpu_memory_mib": Infinity, "n": 312}`:            rel + ":1: unexpected 'I': NaN and Infinity are not JSON numbers",
		"{\"peak_gpu_memory_mib\": 1.0,\n \"n\": 3,\n \"n\": 4}": rel + `:3: duplicate key "n"`,
	} {
		if m, msg := parseMemory(rel, []byte(data)); m != nil || msg != want+"; "+hintMemSyntax {
			t.Errorf("%s:\n got %q\nwant %q", data, msg, want+"; "+hintMemSyntax)
		}
	}
}

func TestRunNumber(t *testing.T) {
	for name, want := range map[string]int{"r1": 1, "r2": 2, "r10": 10, "r123": 123} {
		if n, ok := runNumber(name); !ok || n != want {
			t.Errorf("runNumber(%q) = %d, %v; want %d", name, n, ok, want)
		}
	}
	for _, name := range []string{"r0", "r01", "r-1", "rx", "r", "R1", "r1 ", "run1", "r1.5", "r+1", "r99999999999999999999", "r１"} {
		if n, ok := runNumber(name); ok {
			t.Errorf("runNumber(%q) = %d, want not a run", name, n)
		}
	}
}
