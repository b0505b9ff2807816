package clocks

// ImportMemoryHint says what to log, in a source of format (clockgate
// import's --format), so that the import can write the leg's memory record
// (SPEC §12.1): the column or metric that holds the GPU memory used.
func ImportMemoryHint(format string) string {
	switch format {
	case "nvidia-smi-csv":
		return "log memory.used in the --query-gpu list (nvidia-smi --query-gpu=timestamp,index,uuid,clocks.sm,utilization.gpu,memory.used,… --format=csv -lms 250)"
	case "nvidia-smi-dmon":
		return "log dmon's memory group, whose fb column is the memory used (nvidia-smi dmon -s pucm -o DT)"
	case "prometheus":
		return "enable DCGM_FI_DEV_FB_USED in dcgm-exporter's counters CSV (its default-counters.csv lists it)"
	case "amd-smi-csv":
		return "log the VRAM used (amd-smi metric --mem-usage --csv: used_vram; or amd-smi monitor -v --csv: vram_used)"
	}
	return "log the GPU memory used beside the clocks"
}
