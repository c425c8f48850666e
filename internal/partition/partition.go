// Package partition splits a sequence of costed items into contiguous
// runs: the planner's pipeline stages.
package partition

// Contiguous splits the items whose positive costs are given, in order,
// into stages contiguous non-empty runs (len(costs) >= stages) and returns
// the end (exclusive) of each. The costliest run is as cheap as possible;
// within that limit each run, from the first, ends as near as allowed to
// an equal share of the cost that the runs from it on have left.
func Contiguous(costs []int64, stages int) []int {
	n := len(costs)
	prefix := make([]int64, n+1)
	for i, c := range costs {
		prefix[i+1] = prefix[i] + c
	}
	limit := bottleneck(costs, stages)
	// earliest[k] is the smallest end of stage k that lets stages k+1..
	// cover the rest, each non-empty and within limit: the later stages
	// taken as long as possible, from the last one back.
	earliest := make([]int, stages)
	end := n
	for k := stages - 1; k > 0; k-- {
		start := end - 1
		for start > k && prefix[end]-prefix[start-1] <= limit {
			start--
		}
		earliest[k-1] = start
		end = start
	}
	ends := make([]int, stages)
	start := 0
	for k := range stages - 1 {
		latest := start + 1
		for latest < n-(stages-k-1) && prefix[latest+1]-prefix[start] <= limit {
			latest++
		}
		target := prefix[start] + (prefix[n]-prefix[start])/int64(stages-k)
		best := max(earliest[k], start+1)
		for e := best + 1; e <= latest; e++ {
			if abs(prefix[e]-target) < abs(prefix[best]-target) {
				best = e
			}
		}
		ends[k], start = best, best
	}
	ends[stages-1] = n
	return ends
}

// bottleneck returns the least limit L such that costs split into at most
// stages contiguous runs each costing at most L.
func bottleneck(costs []int64, stages int) int64 {
	var lo, hi int64
	for _, c := range costs {
		lo, hi = max(lo, c), hi+c
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		runs, sum := 1, int64(0)
		for _, c := range costs {
			if sum+c > mid {
				runs, sum = runs+1, 0
			}
			sum += c
		}
		if runs <= stages {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
