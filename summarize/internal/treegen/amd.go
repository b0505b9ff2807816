package treegen

// amdScenarios are legs recorded on AMD Instinct GPUs through amd-smi
// (sampler's amd-smi backend): vendor "amd", eight XCD clocks per sample,
// the lowest of them the SM clock, no persistence mode.
var amdScenarios = []Scenario{
	{Name: "amd-clean",
		About: "sglang against vllm on one AMD Instinct MI300X (amd-smi; max_clk 2100 MHz, SPX/NPS1, perf level AUTO), 2 runs each on one boot: " +
			"each sample's SM clock the lowest of its eight XCDs (2048-2104 MHz, median 2090); no persistence mode and no persistence check; both ratios ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, sglang, 2, mi300x, boot13, func(l *leg) { l.clock = profile{min: 2048, med: 2090, max: 2104} })
			t.arm(llama, vllm, 2, mi300x, boot13, func(l *leg) { l.clock = profile{min: 2052, med: 2090, max: 2100} })
		}},
	{Name: "amd-thermal",
		About: "sglang r1 on an MI300X accrued a socket thermal violation (TVIOL) in 9 busy seconds, derived as 0x40 (HwThermal): " +
			"clock.throttle naming the thermal violation, though its spread stays under 5%",
		build: func(t *tree) {
			t.arm(llama, sglang, 2, mi300x, boot13, func(l *leg) {
				l.clock = profile{min: 2048, med: 2090, max: 2104}
				if l.run == 1 {
					l.throttleRun, l.throttleBit = 9, 0x40
				}
			})
			t.arm(llama, vllm, 2, mi300x, boot13, func(l *leg) { l.clock = profile{min: 2052, med: 2090, max: 2100} })
		}},
	{Name: "amd-vs-nvidia",
		About: "sglang on an AMD Instinct MI300X against vllm on an NVIDIA H100 80GB HBM3 (two machines, so two boots): clock.hardware_mismatch " +
			"naming vendor \"amd\" against \"nvidia\" beside every other static field the GPUs differ in (perf_level and memory_partition against null), " +
			"with clock.cross_boot and clock.offset",
		build: func(t *tree) {
			t.arm(llama, sglang, 2, mi300x, boot13, func(l *leg) { l.clock = profile{min: 2048, med: 2090, max: 2104} })
			t.arm(llama, vllm, 2, h100, bootH1, func(l *leg) {
				l.clock = profile{min: 1935, med: 1980, max: 1980}
				l.busy = derivedBusy(l, 0.62)
			})
		}},
}
