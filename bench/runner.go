package bench

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"runtime"
	"slices"
	"time"
)

// Scenario is one measured stage on one input by one implementation.
//
// Setup, when set, runs once before measuring and returns the operation; the
// operation is called once per iteration and must do the same work each
// time. Bytes and Events are the bytes and events one operation processes
// (zero when the stage has no such unit), from which MB/s and events/s are
// derived. Latency asks the runner to time every operation separately and
// report percentiles; it costs two clock reads per operation, so it is for
// scenarios whose operation takes microseconds or more.
type Scenario struct {
	Name    string // "decode/openai-chat", unique
	Stage   string // "decode", "chain", "repair", ...: scenarios of one stage and input are compared
	Input   string // what the stage ran on, shared by ours and the peers
	Impl    string // "ocbench" or the peer's name
	Bytes   int64
	Events  int64
	Latency bool
	Setup   func() (op func() error, teardown func(), err error)
}

// Result is the measurement of one scenario.
type Result struct {
	Name         string  `json:"name"`
	Stage        string  `json:"stage"`
	Input        string  `json:"input"`
	Impl         string  `json:"impl"`
	Iterations   int64   `json:"iterations"`
	NsPerOp      float64 `json:"nsPerOp"`
	MBPerSec     float64 `json:"mbPerS,omitempty"`
	EventsPerSec float64 `json:"eventsPerS,omitempty"`
	NsPerEvent   float64 `json:"nsPerEvent,omitempty"`
	AllocsPerOp  float64 `json:"allocsPerOp"`
	BytesPerOp   float64 `json:"bytesPerOp"`
	P50Ns        float64 `json:"p50Ns,omitempty"`
	P90Ns        float64 `json:"p90Ns,omitempty"`
	P99Ns        float64 `json:"p99Ns,omitempty"`
	MaxNs        float64 `json:"maxNs,omitempty"`
	Err          string  `json:"error,omitempty"`
	// MemNotMeasured is set for a peer whose allocations cannot be
	// counted (the Node peer): AllocsPerOp and BytesPerOp are not figures.
	MemNotMeasured bool `json:"memNotMeasured,omitempty"`
	// Run is the 1-based repetition (--count) the result belongs to.
	Run int `json:"run"`
}

// Options control a run.
type Options struct {
	// Duration is the measuring time per scenario, like -benchtime.
	Duration time.Duration
	// Count repeats each scenario, like -count.
	Count int
	// Progress, when set, is told when a scenario starts and ends.
	Progress func(done, total int, name string)
	// Measured, when set, gets each result as soon as it is measured.
	Measured func(r Result)
}

func (o *Options) setDefaults() {
	if o.Duration <= 0 {
		o.Duration = 300 * time.Millisecond
	}
	if o.Count <= 0 {
		o.Count = 1
	}
}

// Run measures every scenario Count times, in order, and returns the
// results in the same order (all repetitions of a scenario together). A
// scenario whose setup or operation fails is reported with Err set; the run
// goes on. Cancelling ctx stops before the next scenario.
func Run(ctx context.Context, scs []Scenario, o Options) []Result {
	o.setDefaults()
	out := make([]Result, 0, len(scs)*o.Count)
	total := len(scs) * o.Count
	done := 0
	for _, sc := range scs {
		for run := 1; run <= o.Count; run++ {
			if ctx.Err() != nil {
				return out
			}
			if o.Progress != nil {
				o.Progress(done, total, sc.Name)
			}
			r := measure(sc, o.Duration)
			r.Run = run
			out = append(out, r)
			if o.Measured != nil {
				o.Measured(r)
			}
			done++
		}
	}
	if o.Progress != nil {
		o.Progress(done, total, "")
	}
	return out
}

// measure runs one scenario: a warm-up operation, then batches sized so
// that the whole measurement takes about d, as testing.B does.
func measure(sc Scenario, d time.Duration) Result {
	r := Result{Name: sc.Name, Stage: sc.Stage, Input: sc.Input, Impl: sc.Impl}
	op, teardown, err := sc.Setup()
	if err != nil {
		r.Err = err.Error()
		return r
	}
	if teardown != nil {
		defer teardown()
	}
	// Warm-up: pools, caches and lazily built tables are filled here, so
	// that what is measured is the steady state.
	start := time.Now()
	if err := op(); err != nil {
		r.Err = err.Error()
		return r
	}
	first := time.Since(start)

	var lat []time.Duration
	var ms0, ms1 runtime.MemStats
	n := int64(1)
	if first > 0 {
		n = max(1, int64(d/10/first))
	}
	var elapsed time.Duration
	var iters int64
	var batches []batchMem
	for elapsed < d {
		runtime.ReadMemStats(&ms0)
		t0 := time.Now()
		for i := int64(0); i < n; i++ {
			var ts time.Time
			if sc.Latency {
				ts = time.Now()
			}
			if err := op(); err != nil {
				r.Err = err.Error()
				return r
			}
			if sc.Latency {
				lat = append(lat, time.Since(ts))
			}
		}
		elapsed += time.Since(t0)
		runtime.ReadMemStats(&ms1)
		batches = append(batches, batchMem{n: n, mallocs: ms1.Mallocs - ms0.Mallocs, bytes: ms1.TotalAlloc - ms0.TotalAlloc})
		iters += n
		// Grow the batch towards the remaining time, at most 10x at once.
		if elapsed < d {
			per := float64(elapsed) / float64(iters)
			want := int64(float64(d-elapsed) / math.Max(per, 1))
			n = max(1, min(want, n*10))
		}
	}
	r.Iterations = iters
	r.NsPerOp = float64(elapsed.Nanoseconds()) / float64(iters)
	r.AllocsPerOp, r.BytesPerOp = memPerOp(batches, iters)
	if sc.Bytes > 0 {
		r.MBPerSec = float64(sc.Bytes) * 1e3 / r.NsPerOp // bytes/ns * 1e9 / 1e6
	}
	if sc.Events > 0 {
		r.EventsPerSec = float64(sc.Events) * 1e9 / r.NsPerOp
		r.NsPerEvent = r.NsPerOp / float64(sc.Events)
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		r.P50Ns = float64(percentile(lat, 0.50))
		r.P90Ns = float64(percentile(lat, 0.90))
		r.P99Ns = float64(percentile(lat, 0.99))
		r.MaxNs = float64(lat[len(lat)-1])
	}
	return r
}

// recountTime bounds the operations of one count Recount makes for a
// scenario (countAllocs makes up to recountRounds of them).
const recountTime = 50 * time.Millisecond

// Recount counts again the allocations of every result of scs that was
// charged some, once the caller's background work has ended, and keeps the
// smaller figure. Run's counters are the whole process's: in a default
// bench run the peers are planned (go list's output decoded, their source
// files hashed) on other goroutines while ocbench's own scenarios run, and
// a scenario whose every large batch overlapped that work was charged its
// allocations (180 allocs/op on a chain that allocates none). The recount
// runs as many operations as the result did, at most recountTime of them
// and at least one, after a warm-up operation, as measure does.
func Recount(ctx context.Context, scs []Scenario, results []Result) {
	type key struct{ name, impl string }
	type mem struct{ allocs, bytes float64 }
	counted := map[key]mem{}
	for i := range results {
		r := &results[i]
		if r.Err != "" || r.MemNotMeasured || r.AllocsPerOp == 0 || ctx.Err() != nil {
			continue
		}
		k := key{r.Name, r.Impl}
		m, ok := counted[k]
		if !ok {
			// A peer's result shares our scenario's name but not its
			// Impl, and has no Scenario here: it is left as measured.
			sc := scenarioOf(scs, r.Name, r.Impl)
			if sc == nil {
				continue
			}
			n := max(1, min(r.Iterations, int64(float64(recountTime)/math.Max(r.NsPerOp, 1))))
			var err error
			if m.allocs, m.bytes, err = countAllocs(*sc, n); err != nil {
				continue // Run reported what it measured; a failing recount changes nothing
			}
			counted[k] = m
		}
		if m.allocs < r.AllocsPerOp {
			r.AllocsPerOp, r.BytesPerOp = m.allocs, m.bytes
		}
	}
}

func scenarioOf(scs []Scenario, name, impl string) *Scenario {
	for i := range scs {
		if scs[i].Name == name && scs[i].Impl == impl {
			return &scs[i]
		}
	}
	return nil
}

// recountRounds is how many times countAllocs counts n operations. The
// counters are still the whole process's after the planner has ended: a
// test binary's other goroutines, or a finalizer, can allocate inside one
// count (CI once charged an operation that allocates nothing 7 allocations
// in 100 operations), and that only ever adds, so the least of a few full
// counts is kept. Each count holds all n operations, so an allocation the
// operation makes once every k of them still shows.
const recountRounds = 3

// countAllocs sets sc up, runs one warm-up operation, then counts n
// operations between two reads of the allocation counters, up to
// recountRounds times, and returns the least count (stopping at 0).
func countAllocs(sc Scenario, n int64) (allocs, bytes float64, err error) {
	op, teardown, err := sc.Setup()
	if err != nil {
		return 0, 0, err
	}
	if teardown != nil {
		defer teardown()
	}
	if err := op(); err != nil {
		return 0, 0, err
	}
	var ms0, ms1 runtime.MemStats
	for round := 0; round < recountRounds; round++ {
		runtime.ReadMemStats(&ms0)
		for i := int64(0); i < n; i++ {
			if err := op(); err != nil {
				return 0, 0, err
			}
		}
		runtime.ReadMemStats(&ms1)
		a, b := float64(ms1.Mallocs-ms0.Mallocs)/float64(n), float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(n)
		if round == 0 || a < allocs {
			allocs, bytes = a, b
		}
		if allocs == 0 {
			break
		}
	}
	return allocs, bytes, nil
}

// batchMem is what the process allocated while one batch of n operations ran.
type batchMem struct {
	n              int64
	mallocs, bytes uint64
}

// memPerOp is the allocation count and bytes per operation of the large
// batches (each at least a tenth of all operations) that allocated least per
// operation. The counters are the whole process's: the peer planner and the
// progress line allocate on other goroutines while a scenario runs, and that
// can only add to a batch, so the least of the large batches is the one
// nearest the scenario's own cost. An allocation the scenario makes once
// every k operations still shows in every large batch, since each holds
// many more than k operations once a run is long enough to matter. A run
// with no large batch (many batches of about the same size) is charged
// its whole average, never nothing.
func memPerOp(batches []batchMem, iters int64) (allocs, bytes float64) {
	first := true
	var all batchMem
	for _, b := range batches {
		all.n, all.mallocs, all.bytes = all.n+b.n, all.mallocs+b.mallocs, all.bytes+b.bytes
		if b.n*10 < iters {
			continue
		}
		a := float64(b.mallocs) / float64(b.n)
		if first || a < allocs {
			allocs, bytes, first = a, float64(b.bytes)/float64(b.n), false
		}
	}
	if first && all.n > 0 {
		allocs, bytes = float64(all.mallocs)/float64(all.n), float64(all.bytes)/float64(all.n)
	}
	return allocs, bytes
}

// percentile returns the nearest-rank percentile q of sorted samples.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Filter keeps the scenarios whose name matches re (all when re is nil).
func Filter(scs []Scenario, re *regexp.Regexp) []Scenario {
	if re == nil {
		return scs
	}
	var out []Scenario
	for _, sc := range scs {
		if re.MatchString(sc.Name) {
			out = append(out, sc)
		}
	}
	return out
}

// checkUnique reports duplicated scenario names, which would make reports
// ambiguous.
func checkUnique(scs []Scenario) error {
	seen := make(map[string]bool, len(scs))
	for _, sc := range scs {
		if seen[sc.Name] {
			return fmt.Errorf("bench: scenario %q defined twice", sc.Name)
		}
		seen[sc.Name] = true
	}
	return nil
}
