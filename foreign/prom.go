package foreign

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// promFile reads a Prometheus HTTP API answer of dcgm-exporter metrics: a
// matrix, either the answer to an instant query of a range selector (raw
// scrapes, with --raw-scrapes) or a query_range answer, whose lookback
// repeats a value across a missed scrape (clock.unproven_coverage).
type promFile struct{}

// dcgmMetric is what a dcgm-exporter metric becomes, and the unit its
// value is in, as dcgm-exporter's counters CSVs and dcgm_fields.h state
// them (testdata/foreign-real/dcgm-exporter).
type dcgmMetric struct {
	role  int
	unit  string
	scale float64
	// counter is the boot-proof counter it is (µs), "" for none.
	counter string
}

// dcgmMetrics are the metrics dcgm-exporter's default-counters.csv and
// dcp-metrics-included.csv list, and the fields a clock judgement needs
// that they leave commented out (max clock, reason bitmask, enforced
// limit), under DCGM 4.x names and the older aliases.
var dcgmMetrics = map[string]dcgmMetric{
	"DCGM_FI_DEV_SM_CLOCK":                 {role: roleSM, unit: "MHz"},
	"DCGM_FI_DEV_MEM_CLOCK":                {role: roleMem, unit: "MHz"},
	"DCGM_FI_DEV_MAX_SM_CLOCK":             {role: roleMaxSM, unit: "MHz"},
	"DCGM_FI_DEV_APP_SM_CLOCK":             {role: roleApps, unit: "MHz"},
	"DCGM_FI_DEV_GPU_UTIL":                 {role: roleUtil, unit: "%"},
	"DCGM_FI_DEV_GPU_TEMP":                 {role: roleTemp, unit: "C"},
	"DCGM_FI_DEV_POWER_USAGE":              {role: rolePower, unit: "W"},
	"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": {role: roleEnergy, unit: "mJ", scale: 0.001},
	"DCGM_FI_DEV_CLOCKS_EVENT_REASONS":     {role: roleMask, unit: "bitmask"},
	"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS":   {role: roleMask, unit: "bitmask"},
	"DCGM_FI_DEV_ENFORCED_POWER_LIMIT":     {role: roleLimit, unit: "W"},
	// The frame buffer used: the memory record's quantity.
	"DCGM_FI_DEV_FB_USED": {role: roleMemUsed, unit: "MiB"},
	// The violation times: default-counters.csv says µs, dcp-metrics-
	// included.csv says ns. Read as ns (the smaller amount), so a boot is
	// never proven by a unit read a thousand times too large.
	"DCGM_FI_DEV_POWER_VIOLATION":       {role: roleIgnored, unit: "ns", counter: "dcgm_power_violation_us"},
	"DCGM_FI_DEV_THERMAL_VIOLATION":     {role: roleIgnored, unit: "ns", counter: "dcgm_thermal_violation_us"},
	"DCGM_FI_DEV_SYNC_BOOST_VIOLATION":  {role: roleIgnored, unit: "ns", counter: "dcgm_sync_boost_violation_us"},
	"DCGM_FI_DEV_BOARD_LIMIT_VIOLATION": {role: roleIgnored, unit: "ns", counter: "dcgm_board_limit_violation_us"},
	"DCGM_FI_DEV_LOW_UTIL_VIOLATION":    {role: roleIgnored, unit: "ns", counter: "dcgm_low_util_violation_us"},
	"DCGM_FI_DEV_RELIABILITY_VIOLATION": {role: roleIgnored, unit: "ns", counter: "dcgm_reliability_violation_us"},
	// Listed in the counters CSVs, not read.
	"DCGM_FI_DEV_MEMORY_TEMP": {}, "DCGM_FI_DEV_PCIE_TX_THROUGHPUT": {}, "DCGM_FI_DEV_PCIE_RX_THROUGHPUT": {},
	"DCGM_FI_DEV_PCIE_REPLAY_COUNTER": {}, "DCGM_FI_DEV_MEM_COPY_UTIL": {}, "DCGM_FI_DEV_ENC_UTIL": {},
	"DCGM_FI_DEV_DEC_UTIL": {}, "DCGM_FI_DEV_XID_ERRORS": {}, "DCGM_FI_DEV_FB_FREE": {},
	"DCGM_FI_DEV_FB_RESERVED": {}, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": {}, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": {},
	"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL": {}, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": {}, "DCGM_FI_DEV_RETIRED_SBE": {},
	"DCGM_FI_DEV_RETIRED_DBE": {}, "DCGM_FI_DEV_RETIRED_PENDING": {},
	"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": {}, "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL": {},
	"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": {}, "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL": {},
	"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": {}, "DCGM_FI_DEV_NVLINK_BANDWIDTH_L0": {},
	"DCGM_FI_DEV_VGPU_LICENSE_STATUS": {}, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": {},
	"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": {}, "DCGM_FI_DEV_ROW_REMAP_FAILURE": {},
	"DCGM_FI_PROF_GR_ENGINE_ACTIVE": {}, "DCGM_FI_PROF_SM_ACTIVE": {}, "DCGM_FI_PROF_SM_OCCUPANCY": {},
	"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": {}, "DCGM_FI_PROF_DRAM_ACTIVE": {}, "DCGM_FI_PROF_PIPE_FP64_ACTIVE": {},
	"DCGM_FI_PROF_PIPE_FP32_ACTIVE": {}, "DCGM_FI_PROF_PIPE_FP16_ACTIVE": {}, "DCGM_FI_PROF_PCIE_TX_BYTES": {},
	"DCGM_FI_PROF_PCIE_RX_BYTES": {}, "DCGM_FI_DEV_POWER_MGMT_LIMIT": {},
	// node_exporter's boot time, from the same Prometheus: a boot identity.
	"node_boot_time_seconds": {},
}

// dcgmBlank is what DCGM returns for a blank field, printed by
// dcgm-exporter as these values (DCGM_INT32_BLANK, DCGM_INT64_BLANK and
// the float blank): never a reading.
func dcgmBlank(v float64) bool {
	return v == 2147483632 || v == 9223372036854775794 || v >= 140737488355328
}

type promAnswer struct {
	Status string `json:"status"`
	Data   struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string    `json:"metric"`
			Values [][2]json.RawMessage `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

func (promFile) Parse(in Input, o *Options, c *Collector) error {
	if !o.RawScrapes {
		c.coverage = "a query_range answer: its steps repeat the last value across a missed scrape, so a gap would read as samples (read raw scrapes: an instant query of metric[DURATION], --raw-scrapes)"
	}
	return parseProm(in, o, c)
}

func parseProm(in Input, o *Options, c *Collector) error {
	var a promAnswer
	if err := json.Unmarshal(in.Data, &a); err != nil {
		return refuse(in.Path, 0, 0, "not a Prometheus API answer: %v", err)
	}
	if a.Status != "success" {
		return refuse(in.Path, 0, 0, "status %q, want success", a.Status)
	}
	if a.Data.ResultType != "matrix" {
		return refuse(in.Path, 0, 0, "resultType %q, want matrix (a range selector's raw samples, or query_range)", a.Data.ResultType)
	}
	c.sorted = true
	c.timeZone = "UTC"
	type key struct {
		gpu string
		t   int64
	}
	byKey := map[key]*reading{}
	bootTimes := map[string]float64{}
	for si, s := range a.Data.Result {
		name := s.Metric["__name__"]
		m, ok := dcgmMetrics[name]
		where := fmt.Sprintf("result[%d] %s", si, name)
		if !ok {
			return refuse(in.Path, si+1, 0, "unknown metric %q (series %d)", name, si+1)
		}
		if name == "node_boot_time_seconds" {
			host := s.Metric["instance"]
			for _, v := range s.Values {
				x, err := promValue(v[1])
				if err != nil {
					return refuse(in.Path, si+1, 0, "%s: %v", where, err)
				}
				if old, seen := bootTimes[host]; seen && old != x {
					bootTimes[host] = math.NaN()
				} else if !seen {
					bootTimes[host] = x
				}
			}
			continue
		}
		host := firstLabel(s.Metric, "Hostname", "hostname")
		uuid := firstLabel(s.Metric, "UUID", "uuid")
		gpu := s.Metric["gpu"]
		if o.Host != "" && host != o.Host {
			continue
		}
		if !c.selected(o, gpu, uuid) {
			continue
		}
		if gpu == "" && uuid == "" {
			return refuse(in.Path, si+1, 0, "%s: no gpu or UUID label: several GPUs cannot be told apart", where)
		}
		c.column(name, roleKeys[m.role])
		f := &field{role: m.role, name: name, scale: m.scale}
		for vi, v := range s.Values {
			ts, err := promTime(v[0])
			if err != nil {
				return refuse(in.Path, si+1, vi+1, "%s: %v", where, err)
			}
			x, err := promValue(v[1])
			if err != nil {
				return refuse(in.Path, si+1, vi+1, "%s at %s: %v", where, ts.UTC().Format(time.RFC3339Nano), err)
			}
			if m.role == roleIgnored && m.counter == "" {
				continue
			}
			if dcgmBlank(x) {
				return refuse(in.Path, si+1, vi+1, "%s at %s: %v is a DCGM blank sentinel where a value is required", where, ts.UTC().Format(time.RFC3339Nano), x)
			}
			if !inWindow(ts, o) {
				continue
			}
			k := key{gpu + "\x00" + uuid, ts.UnixNano()}
			r := byKey[k]
			if r == nil {
				r = &reading{path: in.Path, line: si + 1, timeCol: vi + 1, t: ts, hasT: true, uuid: uuid,
					src: fmt.Sprintf("%s@%s", host, strconv.FormatFloat(float64(ts.UnixMilli())/1000, 'f', 3, 64))}
				if n, err := strconv.Atoi(gpu); err == nil && n >= 0 {
					r.index, r.hasIndex = n, true
				}
				r.name, r.driver = s.Metric["modelName"], firstLabel(s.Metric, "DCGM_FI_DRIVER_VERSION", "driver_version")
				byKey[k] = r
			}
			if m.counter != "" {
				if r.cum == nil {
					r.cum = map[string]float64{}
				}
				r.cum[m.counter] = x / 1000
				continue
			}
			if m.role == roleMask {
				if x < 0 || x != math.Trunc(x) || x >= 1<<53 {
					return refuse(in.Path, si+1, vi+1, "%s: %v is not a bit mask", where, x)
				}
				r.mask, r.hasMask = uint64(x), true
				c.masked = true
				continue
			}
			if err := f.set(r, strconv.FormatFloat(x, 'f', -1, 64), in.Path, si+1, vi+1, o); err != nil {
				return err
			}
		}
	}
	var keys []key
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].t != keys[j].t {
			return keys[i].t < keys[j].t
		}
		return keys[i].gpu < keys[j].gpu
	})
	for _, k := range keys {
		r := byKey[k]
		switch {
		case r.sm == 0:
			c.drop(in.Path, r.line, fmt.Sprintf("scrape at %s has no DCGM_FI_DEV_SM_CLOCK", r.t.UTC().Format(time.RFC3339Nano)))
			continue
		case !r.hasUtil && o.BusyAboveMHz == 0:
			return refuse(in.Path, r.line, r.timeCol, "scrape at %s has no DCGM_FI_DEV_GPU_UTIL: enable it, or pass --busy-above-mhz N", r.t.UTC().Format(time.RFC3339Nano))
		}
		c.readings = append(c.readings, r)
	}
	if len(bootTimes) == 1 {
		for host, bt := range bootTimes {
			if !math.IsNaN(bt) {
				c.bootID = fmt.Sprintf("node_boot_time_seconds{instance=%q} %s", host, strconv.FormatFloat(bt, 'f', -1, 64))
			} else {
				c.bootWhy = "node_boot_time_seconds changed within the window (a reboot)"
			}
		}
	} else if len(bootTimes) > 1 {
		c.bootWhy = "node_boot_time_seconds of several instances: select one host"
	}
	if len(c.readings) == 0 {
		return refuse(in.Path, 0, 0, "no DCGM_FI_DEV_SM_CLOCK samples for the selection")
	}
	return nil
}

func firstLabel(m map[string]string, names ...string) string {
	for _, n := range names {
		if v := m[n]; v != "" {
			return v
		}
	}
	return ""
}

func promTime(raw json.RawMessage) (time.Time, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return time.Time{}, fmt.Errorf("timestamp %s is not a number", raw)
	}
	ms := int64(math.Round(f * 1000))
	return time.UnixMilli(ms).UTC(), nil
}

func promValue(raw json.RawMessage) (float64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("value %s is not a string", raw)
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("value %q is not a finite number", s)
	}
	return x, nil
}

// LiveMetrics are the metrics a live import asks for.
var LiveMetrics = []string{"DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MAX_SM_CLOCK", "DCGM_FI_DEV_APP_SM_CLOCK",
	"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
	"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_ENFORCED_POWER_LIMIT",
	"DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_THERMAL_VIOLATION", "DCGM_FI_DEV_FB_USED"}

// QueryLive asks a live Prometheus for the raw scrapes of --from..--to: an
// instant query of a range selector evaluated at --to, never query_range.
// It returns the answer as an Input named after the query.
func QueryLive(base string, o *Options, client *http.Client) (Input, string, error) {
	if o.From.IsZero() || o.To.IsZero() || !o.To.After(o.From) {
		return Input{}, "", fmt.Errorf("--prometheus needs --from and --to, --to after --from")
	}
	secs := int64(math.Ceil(o.To.Sub(o.From).Seconds()))
	u, err := url.Parse(strings.TrimSuffix(base, "/") + "/api/v1/query")
	if err != nil {
		return Input{}, "", err
	}
	at := strconv.FormatFloat(float64(o.To.UnixMilli())/1000, 'f', 3, 64)
	names := fmt.Sprintf(`__name__=~%q`, strings.Join(LiveMetrics, "|"))
	// dcgm-exporter names the host Hostname, some relabelings hostname: a
	// range vector takes no "or", so each is its own query. The GPU is
	// selected as the file is, by its UUID/uuid or gpu label.
	var queries []string
	if o.Host != "" {
		for _, label := range []string{"Hostname", "hostname"} {
			queries = append(queries, fmt.Sprintf("{%s=%q,%s}[%ds]", label, o.Host, names, secs))
		}
	} else {
		queries = append(queries, fmt.Sprintf("{%s}[%ds]", names, secs))
	}
	if o.NodeInstance != "" {
		// The node's boot time, from node_exporter scraped into the same
		// Prometheus: a boot identity for the window.
		queries = append(queries, fmt.Sprintf("node_boot_time_seconds{instance=%q}[%ds]", o.NodeInstance, secs))
	}
	var merged map[string]any
	var results []any
	for _, q := range queries {
		body, err := instantQuery(client, u.String(), q, at)
		if err != nil {
			return Input{}, "", err
		}
		var a map[string]any
		if json.Unmarshal(body, &a) != nil {
			return Input{}, "", fmt.Errorf("%s: an answer that is not JSON", u)
		}
		d, _ := a["data"].(map[string]any)
		if d == nil {
			return Input{}, "", fmt.Errorf("%s: an answer without data: %.200s", u, body)
		}
		r, _ := d["result"].([]any)
		results = append(results, r...)
		if merged == nil {
			merged = a
		}
	}
	merged["data"].(map[string]any)["result"] = results
	body, err := json.Marshal(merged)
	if err != nil {
		return Input{}, "", err
	}
	q := strings.Join(queries, " and ")
	return Input{Path: base + " query " + q, Data: body}, q, nil
}

// instantQuery posts one instant query evaluated at at, and returns the
// answer's body.
func instantQuery(client *http.Client, u, q, at string) ([]byte, error) {
	resp, err := client.PostForm(u, url.Values{"query": {q}, "time": {at}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", u, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// ConvertLive converts the answer of QueryLive: raw scrapes.
func ConvertLive(in Input, o Options) (*Result, error) {
	o.RawScrapes = true
	return Convert(FormatPrometheus, []Input{in}, o)
}
