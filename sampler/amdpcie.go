package sampler

import (
	"fmt"
	"math"

	"github.com/clockgate/clockgate/strictjson"
)

// amd-smi's PCIe link (SPEC §12.2): metric --pcie's pcie block gives the
// current link, static --bus's bus block the maximum, each as a width in
// lanes and a speed in GT/s, which names the generation.
const (
	amdPCIeWidth    = "pcie.width"
	amdPCIeSpeed    = "pcie.speed"
	amdPCIeWidthMax = "bus.max_pcie_width"
	amdPCIeSpeedMax = "bus.max_pcie_speed"
)

// pcieGenOfGTs names the PCIe generation of each link speed, in GT/s per
// lane (PCI-SIG: Gen1 2.5, Gen2 5, Gen3 8, Gen4 16, Gen5 32, Gen6 64).
var pcieGenOfGTs = map[float64]int{2.5: 1, 5: 2, 8: 3, 16: 4, 32: 5, 64: 6}

// amdPCIeLink reads a link's generation and width from the speed and
// width at the two paths; "N/A" in either is errAMDNA.
func amdPCIeLink(g *strictjson.Value, speedPath, widthPath string) (gen, width int, err error) {
	gts, err := amdQuantity(g, speedPath, "GT/s")
	if err != nil {
		return 0, 0, err
	}
	gen, ok := pcieGenOfGTs[gts]
	if !ok {
		return 0, 0, &amdFieldError{amdField(speedPath) + ".value", fmt.Errorf("%v GT/s is no PCIe generation's speed (2.5, 5, 8, 16, 32, 64)", gts)}
	}
	v, err := lookup(g, widthPath)
	if err != nil {
		return 0, 0, err
	}
	f := amdField(widthPath)
	switch {
	case v.Kind == strictjson.String && v.Str == "N/A":
		return 0, 0, &amdFieldError{f, errAMDNA}
	case v.Kind != strictjson.Number || v.Num != math.Trunc(v.Num) || v.Num < 1 || v.Num > maxPCIe:
		return 0, 0, &amdFieldError{f, fmt.Errorf("want a lane count from 1 to %d, found %s", maxPCIe, v.Describe())}
	}
	return gen, int(v.Num), nil
}
