package treegen

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/foreign"
)

// importedLog writes a leg's clock evidence the way clockgate import makes
// it of an nvidia-smi --query-gpu log: the log printed as nvidia-smi prints
// it (local time at -07:00, values with units), converted by foreign.
type importedLog struct {
	// counterUS is every event counter's value through the leg (µs since
	// the driver loaded): a box that has power-capped for that long.
	counterUS int64
	// recommended logs the --query-gpu list docs/import.md recommends
	// (persistence, pstate, the applications clock, the reason bitmask and
	// the enforced limit besides), so that the leg can be established.
	recommended bool
	// zoned records --tz's zone in the record, as clockgate import does
	// since SPEC §12.1.1 (the older scenarios' records predate it).
	zoned bool
}

// recommendedQuery is docs/import.md's --query-gpu list, as nvidia-smi
// heads its columns.
var recommendedQuery = []string{"timestamp", "index", "uuid", "name", "driver_version", "persistence_mode", "pstate",
	"clocks.sm [MHz]", "clocks.max.sm [MHz]", "clocks.applications.graphics [MHz]", "clocks_event_reasons.active",
	"enforced.power.limit [W]", "utilization.gpu [%]", "temperature.gpu", "power.draw [W]",
	"clocks_event_reasons_counters.sw_power_cap [us]", "clocks_event_reasons_counters.sync_boost [us]",
	"clocks_event_reasons_counters.sw_thermal_slowdown [us]", "clocks_event_reasons_counters.hw_thermal_slowdown [us]",
	"clocks_event_reasons_counters.hw_power_brake_slowdown [us]"}

// importedQuery is the log's --query-gpu list: what a careful user logs
// with nvidia-smi before drivers record the reason bitmask in it.
var importedQuery = []string{"timestamp", "index", "uuid", "name", "driver_version", "clocks.sm [MHz]", "clocks.max.sm [MHz]",
	"utilization.gpu [%]", "power.draw [W]", "temperature.gpu",
	"clocks_event_reasons_counters.sw_power_cap [us]", "clocks_event_reasons_counters.sync_boost [us]",
	"clocks_event_reasons_counters.sw_thermal_slowdown [us]", "clocks_event_reasons_counters.hw_thermal_slowdown [us]",
	"clocks_event_reasons_counters.hw_power_brake_slowdown [us]"}

var importedZone = time.FixedZone("-07:00", -7*3600)

func (im *importedLog) files(l leg, samples []clocks.Sample, base string) map[string][]byte {
	var b strings.Builder
	query := importedQuery
	if im.recommended {
		query = recommendedQuery
	}
	b.WriteString(strings.Join(query, ", ") + "\n")
	for _, s := range samples {
		t, err := time.Parse(time.RFC3339Nano, s.T)
		if err != nil {
			panic(err)
		}
		if im.recommended {
			// The applications clock at the maximum; the box's 700 W limit.
			fmt.Fprintf(&b, "%s, %d, %s, %s, %s, %s, %s, %d MHz, %d MHz, %d MHz, %s, 700.00 W, %d %%, %.0f, %.2f W",
				t.In(importedZone).Format("2006/01/02 15:04:05.000"), s.GPUIndex, s.GPUUUID, s.GPUName, s.DriverVersion,
				s.PersistenceMode, s.PState, s.SMClockMHz, s.ClocksMaxSMMHz, s.ClocksMaxSMMHz, s.ThrottleReasonsActive,
				s.UtilizationGPUPct, *s.TemperatureGPUC, *s.PowerDrawW)
			for range 5 {
				fmt.Fprintf(&b, ", %d us", im.counterUS)
			}
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "%s, %d, %s, %s, %s, %d MHz, %d MHz, %d %%, %.2f W, %.0f",
			t.In(importedZone).Format("2006/01/02 15:04:05.000"), s.GPUIndex, s.GPUUUID, s.GPUName, s.DriverVersion,
			s.SMClockMHz, s.ClocksMaxSMMHz, s.UtilizationGPUPct, *s.PowerDrawW, *s.TemperatureGPUC)
		for range 5 {
			fmt.Fprintf(&b, ", %d us", im.counterUS)
		}
		b.WriteString("\n")
	}
	name := "nvidia-smi-" + strings.ReplaceAll(base, "/", "-") + ".csv"
	res, err := foreign.Convert(foreign.FormatSMICSV, []foreign.Input{{Path: name, Data: []byte(b.String())}},
		foreign.Options{TZ: importedZone, TZName: "-07:00", Given: map[string]string{"tz": "-07:00"}})
	if err != nil {
		panic(err)
	}
	if im.zoned {
		res.Record.Window.StampZone(importedZone, "")
	}
	rec, err := json.MarshalIndent(res.Record, "", "  ")
	if err != nil {
		panic(err)
	}
	imp, err := json.MarshalIndent(res.Import, "", "  ")
	if err != nil {
		panic(err)
	}
	return map[string][]byte{
		"clocks/" + base + ".samples.jsonl": res.Stream,
		"clocks/" + base + ".summary.json":  append(rec, '\n'),
		"clocks/" + base + ".import.json":   append(imp, '\n'),
	}
}

// monthsApart is a leg logged on 3 November 2026 (the box's -07:00), one
// engine's legs an hour after the other's; its results, by
// resultsOn, ran on another day.
func monthsApart(resultsOn map[string]int) func(*leg) {
	return func(l *leg) {
		l.clock = profile{flat: 1980}
		l.imported = &importedLog{counterUS: 9_000_000_000, recommended: true, zoned: true}
		// vLLM stamps each date at its point's end, here in UTC (a client
		// in a container); the log is in the box's -07:00.
		l.pw = &pointWin{zone: "America/Phoenix", client: time.UTC, dates: true}
		l.start = time.Date(2026, 11, 3, 16+engineSlot(l.engine.name), 0, 0, 0, time.UTC).Add(time.Duration(l.run-1) * 7 * time.Minute)
		if d, ok := resultsOn[l.engine.name]; ok {
			l.benchStart = time.Date(2026, 8, d, 16+engineSlot(l.engine.name), 0, 0, 0, time.UTC).Add(time.Duration(l.run-1) * 7 * time.Minute)
		}
	}
}

// importedScenarios are trees whose clock evidence clockgate import made.
var importedScenarios = []Scenario{
	{Name: "imported-months-apart",
		About: "every leg's clocks imported from an nvidia-smi log of 3 November 2026 in the shape docs/import.md recommends (--tz -07:00), " +
			"establishable on its own, but fastengine's vLLM results are dated 16 August and vllm's 18 August: under neither the log's zone nor UTC " +
			"does any result overlap its leg's clock window, so every leg carries bench.outside_window (SPEC §12.1.1): both ratios NOT ESTABLISHED",
		build: func(t *tree) {
			apart := monthsApart(map[string]int{"fastengine": 16, "vllm": 18})
			for _, e := range []engine{fastengine, vllm} {
				t.arm(llama, e, 2, h100, clocks.Unproven, apart)
			}
		}},
	{Name: "imported-no-time",
		About: "imported-same-run's logs, but every result written by python -m sglang.bench_serving, which records no time: " +
			"nothing ties the results to the logs, so every leg carries clock.unproven_window (SPEC §12.1.1): both ratios NOT ESTABLISHED",
		build: func(t *tree) {
			same := monthsApart(nil)
			for _, e := range []engine{fastengine, vllm} {
				t.arm(llama, e, 2, h100, clocks.Unproven, func(l *leg) {
					same(l)
					l.style = styleSGLang
				})
			}
		}},
	{Name: "imported-same-run",
		About: "imported-months-apart's logs with the results of the same runs: every result's date lies inside its leg's clock window " +
			"(the dates in UTC, the log at -07:00), so no bench.outside_window; both ratios ESTABLISHED",
		build: func(t *tree) {
			same := monthsApart(nil)
			for _, e := range []engine{fastengine, vllm} {
				t.arm(llama, e, 2, h100, clocks.Unproven, same)
			}
		}},

	{Name: "imported-two-arm",
		About: "fastengine and vllm, 2 runs each on one H100, every leg's clocks imported from an nvidia-smi --query-gpu log " +
			"(local time at -07:00, units printed) that records the GPU, its maximum clock and the event counters but no reason bitmask, " +
			"enforced limit, persistence mode or applications clock: the counters (9000 s of power capping since the driver loaded) " +
			"prove the four legs one boot across gaps under 2 h, so no clock.unproven_boot; every leg clock.unproven_throttle, " +
			"_power_limit, _persistence and _static (the applications clock): NOT ESTABLISHED, as nothing but the log's word stands for them",
		build: func(t *tree) {
			for _, e := range []engine{fastengine, vllm} {
				t.arm(llama, e, 2, h100, clocks.Unproven, func(l *leg) {
					l.clock = profile{flat: 1980}
					l.imported = &importedLog{counterUS: 9_000_000_000}
				})
			}
		}},
	{Name: "imported-unproven-boot", Override: true,
		About: "the same imported legs, but the event counters stand at 1.2 s since the driver loaded, less than any gap between legs could " +
			"gather after a reload: clock.unproven_boot at the ratio, a caveat under --allow-cross-boot; every leg's own unproven reasons stand",
		build: func(t *tree) {
			for _, e := range []engine{fastengine, vllm} {
				t.arm(llama, e, 2, h100, clocks.Unproven, func(l *leg) {
					l.clock = profile{flat: 1980}
					l.imported = &importedLog{counterUS: 1_200_000}
				})
			}
		}},
}
