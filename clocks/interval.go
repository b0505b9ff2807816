package clocks

import (
	"errors"
	"math/big"
	"sort"
	"time"
)

// IntervalFromTimes infers the sampler interval of a stream that does not
// say it (build, import): the median gap between successive samples of
// one GPU, rounded to the millisecond, held to the check the record will
// meet. series holds each GPU's sample times in stream order, as the
// stream writes them; gaps are taken per GPU and pooled (the rows of one
// reading share its time, so between rows of different GPUs there is no
// gap to measure).
//
// A sampler reads on fixed ticks: a late reading is followed by an early
// one, so on a loaded box the median gap can sit above the mean spacing
// (gaps of 85, 121 and 121 ms at 100 ms). A record's interval_s over
// MaxIntervalOfMeanGapPct of a GPU's mean spacing is clock.stream_mismatch
// (intervalAgainstSpacing), so where the median passes that share of the
// smallest mean spacing of any GPU, the spacing itself, floored to the
// millisecond, is the interval: a sampler never reads faster than its
// interval on average. So is it where the median rounds to nothing (times
// to the second, several readings a second). A GPU whose samples span no
// time has no spacing, as the check reads it.
func IntervalFromTimes(series [][]time.Time) (float64, error) {
	var gaps []time.Duration
	var meanMin time.Duration
	spaced := false
	for _, ts := range series {
		for i := 1; i < len(ts); i++ {
			gaps = append(gaps, ts[i].Sub(ts[i-1]))
		}
		if len(ts) < 2 {
			continue
		}
		if span := ts[len(ts)-1].Sub(ts[0]); span > 0 {
			if mean := span / time.Duration(len(ts)-1); !spaced || mean < meanMin {
				meanMin, spaced = mean, true
			}
		}
	}
	if len(gaps) == 0 {
		if len(series) > 1 {
			return 0, errors.New("fewer than two samples of any one GPU: the interval cannot be inferred")
		}
		return 0, errors.New("fewer than two samples: the interval cannot be inferred")
	}
	if !spaced {
		return 0, errors.New("samples are not spaced in time (each GPU's first and last share one time)")
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	g := gaps[len(gaps)/2].Round(time.Millisecond)
	// g × 100 > meanMin × MaxIntervalOfMeanGapPct, exactly (as the check
	// compares, without overflow).
	over := new(big.Int).Mul(big.NewInt(int64(g)), big.NewInt(100)).Cmp(
		new(big.Int).Mul(big.NewInt(int64(meanMin)), big.NewInt(MaxIntervalOfMeanGapPct))) > 0
	if over || g <= 0 {
		g = meanMin.Truncate(time.Millisecond)
	}
	if g <= 0 {
		return 0, errors.New("samples are not spaced in time (under a millisecond apart on average)")
	}
	return g.Seconds(), nil
}
