/*
 * A stand-in for libnvidia-ml.so.1 that clockgate's tests compile with the C
 * compiler, to prove the purego bindings end to end: argument order and
 * widths, pointer results, the 64-bit throttle set, strings and the
 * nvmlUtilization_t struct, and nvmlFieldValue_t arrays (the clock event
 * counters, in ns, as a 590 driver numbers them). It has two GPUs, whose SM clocks differ, and
 * every value is synthetic. It exports only calls that read, and each
 * checks its arguments, answering NVML_ERROR_INVALID_ARGUMENT (2) to
 * anything unexpected.
 *
 * Its energy counter (field 83 at the GPU's scope, and
 * nvmlDeviceGetTotalEnergyConsumption) counts the GPU's 412.345 W on the
 * monotonic clock, in mJ, from a different start on each GPU, so that it
 * agrees with the power it reports.
 *
 * Compiled with -DFAKENVML_MIG, utilization is unsupported (3), as on a
 * MIG-enabled GPU, and MIG mode is reported enabled.
 */
#include <string.h>
#include <time.h>

typedef int nvmlReturn_t;
typedef struct fake_device *nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef union {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
	unsigned short usVal;
} nvmlValue_t;
typedef struct {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;
	long long latencyUsec;
	int valueType; /* nvmlValueType_t */
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;

struct fake_device { int index; };
static struct fake_device devices[2] = {{0}, {1}};
static int initialized;

#define CHECK_DEV(d) do { if (!initialized) return 1; if ((d) != &devices[0] && (d) != &devices[1]) return 2; } while (0)

static nvmlReturn_t copy_string(const char *s, char *buf, unsigned int length) {
	if (buf == NULL) return 2;
	if (strlen(s) + 1 > length) return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
	strcpy(buf, s);
	return 0;
}

nvmlReturn_t nvmlInit_v2(void) { initialized = 1; return 0; }
nvmlReturn_t nvmlShutdown(void) { if (!initialized) return 1; initialized = 0; return 0; }

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
	if (!initialized) return 1;
	return copy_string("590.44.01", version, length);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
	if (!initialized) return 1;
	if (count == NULL) return 2;
	*count = 2;
	return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
	if (!initialized) return 1;
	if (index > 1 || device == NULL) return 2;
	*device = &devices[index];
	return 0;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length) {
	CHECK_DEV(d);
	return copy_string(d->index == 0 ? "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30" : "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31", uuid, length);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length) {
	CHECK_DEV(d);
	return copy_string("NVIDIA H100 80GB HBM3", name, length);
}

/* nvmlClockType_t: 0 GRAPHICS, 1 SM, 2 MEM */
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *clock) {
	CHECK_DEV(d);
	if (clock == NULL) return 2;
	switch (type) {
	case 1: *clock = d->index == 0 ? 1755 : 1740; return 0;
	case 2: *clock = 2619; return 0;
	}
	return 2;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned int *clock) {
	CHECK_DEV(d);
	if (type != 1 || clock == NULL) return 2;
	*clock = 1980;
	return 0;
}

nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t d, int type, unsigned int *clock) {
	CHECK_DEV(d);
	if (type != 0 || clock == NULL) return 2;
	return 26; /* NVML_ERROR_DEPRECATED, as drivers from 590 answer */
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *reasons) {
	CHECK_DEV(d);
	if (reasons == NULL) return 2;
	*reasons = 0x0000010000000004ULL; /* a high bit proves all 64 arrive */
	return 0;
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *mode) {
	CHECK_DEV(d);
	if (mode == NULL) return 2;
	*mode = 1;
	return 0;
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t d, int *ps) {
	CHECK_DEV(d);
	if (ps == NULL) return 2;
	*ps = 2;
	return 0;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
	CHECK_DEV(d);
	if (u == NULL) return 2;
#ifdef FAKENVML_MIG
	return 3; /* NVML_ERROR_NOT_SUPPORTED */
#endif
	u->gpu = 87;
	u->memory = 41;
	return 0;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *current, unsigned int *pending) {
	CHECK_DEV(d);
	if (current == NULL || pending == NULL) return 2;
#ifdef FAKENVML_MIG
	*current = *pending = 1;
#else
	*current = *pending = 0;
#endif
	return 0;
}

/* nvmlTemperatureSensors_t 0: the GPU */
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *temp) {
	CHECK_DEV(d);
	if (sensor != 0 || temp == NULL) return 2;
	*temp = 47;
	return 0;
}

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

/* GPU 0 uses 71234 MiB of 81559, GPU 1 70000.5 MiB. */
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
	CHECK_DEV(d);
	if (m == NULL) return 2;
	m->total = 81559ULL << 20;
	m->used = d->index == 0 ? 71234ULL << 20 : (70000ULL << 20) + (1ULL << 19);
	m->free = m->total - m->used;
	return 0;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw) {
	CHECK_DEV(d);
	if (mw == NULL) return 2;
	*mw = 412345;
	return 0;
}

/* The GPU's energy in mJ: 412345 mW times the monotonic time in µs, / 1e6. */
static unsigned long long energy_mj(struct fake_device *d) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	unsigned long long us = (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
	return (d->index == 0 ? 9000000000ULL : 9100000000ULL) + us * 412345ULL / 1000000ULL;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *energy) {
	CHECK_DEV(d);
	if (energy == NULL) return 2;
	*energy = energy_mj(d);
	return 0;
}

/*
 * The clock event counters of a 590 driver, in ns: SW_POWER_CAP 74,
 * SYNC_BOOST 76, SW_THERM 269, HW_THERM 270, HW_POWER_BRAKE 271 as
 * unsigned long long (3); 251 is power smoothing's enablement there, an
 * unsigned int (1); 83 is the energy counter, in mJ. Other ids are
 * NVML_ERROR_NOT_SUPPORTED per field. The
 * timestamp and latency are written too, so a misplaced value shows.
 */
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t *values) {
	CHECK_DEV(d);
	if (count <= 0 || values == NULL) return 2;
	for (int i = 0; i < count; i++) {
		nvmlFieldValue_t *v = &values[i];
		unsigned long long base = d->index == 0 ? 0 : 1000000ULL;
		if (v->scopeId != 0) return 2;
		v->timestamp = 1786529703123456LL;
		v->latencyUsec = 17;
		v->nvmlReturn = 0;
		v->valueType = 3;
		switch (v->fieldId) {
		case 74: v->value.ullVal = base + 0x000001234567890AULL; break; /* over 32 bits */
		case 76: v->value.ullVal = base + 0; break;
		case 269: v->value.ullVal = base + 7000; break;
		case 270: v->value.ullVal = base + 999; break;
		case 271: v->value.ullVal = base + 2000001; break;
		case 251: v->valueType = 1; v->value.ullVal = 0; v->value.uiVal = 1; break;
		case 83: v->value.ullVal = energy_mj(d); break; /* NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, mJ */
		default: v->valueType = 0; v->value.ullVal = 0; v->nvmlReturn = 3; break;
		}
	}
	return 0;
}

/* NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE is 32; the caller's buffer must hold it. */
/* The PCIe link: both GPUs support Gen5 x16; GPU 1's link trained at
 * Gen4 x8 (a GPU in a slot that came up low). */
static nvmlReturn_t pcie_link(nvmlDevice_t d, unsigned int *v, unsigned int gpu0, unsigned int gpu1) {
	CHECK_DEV(d);
	if (v == NULL) return 2;
	*v = d->index == 0 ? gpu0 : gpu1;
	return 0;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { return pcie_link(d, v, 5, 4); }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { return pcie_link(d, v, 16, 8); }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { return pcie_link(d, v, 5, 5); }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { return pcie_link(d, v, 16, 16); }

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *version, unsigned int length) {
	CHECK_DEV(d);
	if (length < 32) return 7;
	return copy_string(d->index == 0 ? "96.00.A5.00.01" : "96.00.A5.00.02", version, length);
}

/* nvmlProcessInfo_t (v2): pid, then usedGpuMemory at offset 8, then the MIG instance ids. */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;

/* GPU 0 runs two compute processes, GPU 1 none. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos) {
	static const unsigned int pids[2] = {4100, 777};
	unsigned int n = 0;
	CHECK_DEV(d);
	if (count == NULL) return 2;
	if (d->index == 0) n = 2;
	if (*count < n) { *count = n; return 7; }
	*count = n;
	if (n > 0 && infos == NULL) return 2;
	for (unsigned int i = 0; i < n; i++) {
		infos[i].pid = pids[i];
		infos[i].usedGpuMemory = 0xFFFFFFFF00000000ULL + i; /* garbage where a misplaced pid would be read */
		infos[i].gpuInstanceId = 0xFFFFFFFF;
		infos[i].computeInstanceId = 0xFFFFFFFF;
	}
	return 0;
}

nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length) {
	if (!initialized) return 1;
	switch (pid) {
	case 4100: return copy_string("python3", name, length);
	case 777: return copy_string("/usr/bin/trainer", name, length);
	}
	return 6; /* NVML_ERROR_NOT_FOUND */
}
