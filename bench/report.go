package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Ours is the Impl name of ocbench's own scenarios.
const Ours = "ocbench"

// Summary is the median over a scenario's repetitions.
type Summary struct {
	Result
	Runs int `json:"runs"`
}

// Ratio compares ocbench with one peer on the same stage and input.
// Speedup is the peer's ns/op over ours (above 1: ocbench is faster);
// AllocRatio the peer's allocs/op over ours (+Inf rendered as "inf" when
// ours allocate nothing).
type Ratio struct {
	Stage      string  `json:"stage"`
	Input      string  `json:"input"`
	Peer       string  `json:"peer"`
	Speedup    float64 `json:"speedup"`
	OursAllocs float64 `json:"oursAllocsPerOp"`
	PeerAllocs float64 `json:"peerAllocsPerOp"`
	// PeerMemNotMeasured: the peer's allocations are not counted (Node).
	PeerMemNotMeasured bool    `json:"peerMemNotMeasured,omitempty"`
	OursNsPerOp        float64 `json:"oursNsPerOp"`
	PeerNsPerOp        float64 `json:"peerNsPerOp"`
}

// Report is a whole run: environment, per-scenario medians, every raw
// result and the peer ratios computed from the medians.
type Report struct {
	Started   time.Time `json:"started"`
	GoVersion string    `json:"goVersion"`
	GOOS      string    `json:"goos"`
	GOARCH    string    `json:"goarch"`
	CPUs      int       `json:"cpus"`
	Duration  string    `json:"durationPerScenario"`
	Count     int       `json:"count"`
	Summaries []Summary `json:"scenarios"`
	Ratios    []Ratio   `json:"ratios"`
	Results   []Result  `json:"results"`
	Notes     []string  `json:"notes,omitempty"`
}

// NewReport summarises results (medians per scenario, in first-seen order)
// and computes the peer ratios.
func NewReport(results []Result, o Options, started time.Time) *Report {
	o.setDefaults()
	rep := &Report{
		Started: started, GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		CPUs: runtime.GOMAXPROCS(0), Duration: o.Duration.String(), Count: o.Count, Results: results,
	}
	// Ours and the peers share scenario names (stage/input); the
	// implementation tells them apart.
	type key struct{ name, impl string }
	var order []key
	byName := map[key][]Result{}
	for _, r := range results {
		k := key{r.Name, r.Impl}
		if _, ok := byName[k]; !ok {
			order = append(order, k)
		}
		byName[k] = append(byName[k], r)
	}
	// Peers go right under ocbench's row of the same scenario.
	firstOf := map[string]int{}
	for i, k := range order {
		if _, ok := firstOf[k.name]; !ok {
			firstOf[k.name] = i
		}
	}
	slices.SortStableFunc(order, func(a, b key) int { return firstOf[a.name] - firstOf[b.name] })
	for _, name := range order {
		rep.Summaries = append(rep.Summaries, summarise(byName[name]))
	}
	rep.Ratios = ratios(rep.Summaries)
	return rep
}

func summarise(rs []Result) Summary {
	s := Summary{Result: rs[0], Runs: len(rs)}
	var ok []Result
	for _, r := range rs {
		if r.Err == "" {
			ok = append(ok, r)
		} else {
			s.Err = r.Err
		}
	}
	if len(ok) == 0 {
		return s
	}
	s.Err = ""
	med := func(f func(Result) float64) float64 {
		v := make([]float64, len(ok))
		for i, r := range ok {
			v[i] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	s.NsPerOp = med(func(r Result) float64 { return r.NsPerOp })
	s.MBPerSec = med(func(r Result) float64 { return r.MBPerSec })
	s.EventsPerSec = med(func(r Result) float64 { return r.EventsPerSec })
	s.NsPerEvent = med(func(r Result) float64 { return r.NsPerEvent })
	s.AllocsPerOp = med(func(r Result) float64 { return r.AllocsPerOp })
	s.BytesPerOp = med(func(r Result) float64 { return r.BytesPerOp })
	s.P50Ns = med(func(r Result) float64 { return r.P50Ns })
	s.P90Ns = med(func(r Result) float64 { return r.P90Ns })
	s.P99Ns = med(func(r Result) float64 { return r.P99Ns })
	s.MaxNs = med(func(r Result) float64 { return r.MaxNs })
	var iters int64
	for _, r := range ok {
		iters += r.Iterations
	}
	s.Iterations = iters
	return s
}

func ratios(ss []Summary) []Ratio {
	type key struct{ stage, input string }
	ours := map[key]Summary{}
	for _, s := range ss {
		if s.Impl == Ours && s.Err == "" {
			ours[key{s.Stage, s.Input}] = s
		}
	}
	var out []Ratio
	for _, s := range ss {
		if s.Impl == Ours || s.Err != "" {
			continue
		}
		o, ok := ours[key{s.Stage, s.Input}]
		if !ok || o.NsPerOp == 0 {
			continue
		}
		out = append(out, Ratio{
			Stage: s.Stage, Input: s.Input, Peer: s.Impl,
			Speedup:    s.NsPerOp / o.NsPerOp,
			OursAllocs: o.AllocsPerOp, PeerAllocs: s.AllocsPerOp,
			OursNsPerOp: o.NsPerOp, PeerNsPerOp: s.NsPerOp, PeerMemNotMeasured: s.MemNotMeasured,
		})
	}
	return out
}

// ratioFor returns the ratio of summary s against ocbench, if s is a peer.
func (rep *Report) ratioFor(s Summary) (Ratio, bool) {
	for _, r := range rep.Ratios {
		if r.Stage == s.Stage && r.Input == s.Input && r.Peer == s.Impl {
			return r, true
		}
	}
	return Ratio{}, false
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteTable writes the human-readable table: one row per scenario, peers
// under ours with their ratio.
func (rep *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\timpl\ttime/op\tMB/s\tevents/s\tallocs/op\tB/op\tp50\tp99\tvs ocbench\t")
	for _, s := range rep.Summaries {
		if s.Err != "" {
			fmt.Fprintf(tw, "%s\t%s\tfailed: %s\t\t\t\t\t\t\t\t\n", s.Name, s.Impl, oneLine(s.Err))
			continue
		}
		vs := ""
		if r, ok := rep.ratioFor(s); ok {
			vs = fmt.Sprintf("ocbench %.1fx faster", r.Speedup)
			if r.Speedup < 1 {
				vs = fmt.Sprintf("ocbench %.1fx slower", 1/r.Speedup)
			}
		}
		allocs, bytes := fmtAllocs(s.AllocsPerOp), fmtBytes(s.BytesPerOp)
		if s.MemNotMeasured {
			allocs, bytes = "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			s.Name, s.Impl, fmtDur(s.NsPerOp), fmtNum(s.MBPerSec), fmtCount(s.EventsPerSec),
			allocs, bytes, fmtDur(s.P50Ns), fmtDur(s.P99Ns), vs)
	}
	return tw.Flush()
}

// ResultLine is one result as a line of the run's progress: name,
// implementation, time per operation, throughput and allocations.
func ResultLine(r Result) string {
	if r.Err != "" {
		return fmt.Sprintf("%-38s %-20s failed: %s", r.Name, r.Impl, oneLine(r.Err))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-38s %-20s %10s/op", r.Name, r.Impl, fmtDur(r.NsPerOp))
	if r.MBPerSec > 0 {
		fmt.Fprintf(&b, " %9.1f MB/s", r.MBPerSec)
	}
	if !r.MemNotMeasured {
		fmt.Fprintf(&b, " %8s allocs/op", fmtAllocs(r.AllocsPerOp))
	}
	return b.String()
}

// WriteBenchfmt writes Go benchmark lines (every repetition) that benchstat
// can compare across runs.
func (rep *Report) WriteBenchfmt(w io.Writer) error {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: github.com/ocbench/ocbench/bench\n", rep.GOOS, rep.GOARCH)
	for _, r := range rep.Results {
		if r.Err != "" {
			continue
		}
		fmt.Fprintf(w, "%s-%d\t%d\t%.1f ns/op", BenchfmtName(r), rep.CPUs, r.Iterations, r.NsPerOp)
		if r.MBPerSec > 0 {
			fmt.Fprintf(w, "\t%.2f MB/s", r.MBPerSec)
		}
		if r.NsPerEvent > 0 {
			fmt.Fprintf(w, "\t%.2f ns/event", r.NsPerEvent)
		}
		if r.P99Ns > 0 {
			fmt.Fprintf(w, "\t%.0f p50-ns\t%.0f p99-ns", r.P50Ns, r.P99Ns)
		}
		if !r.MemNotMeasured {
			fmt.Fprintf(w, "\t%.0f B/op\t%.0f allocs/op", r.BytesPerOp, r.AllocsPerOp)
		}
		_, err := fmt.Fprintln(w)
		if err != nil {
			return err
		}
	}
	return nil
}

// BenchfmtName is the Go benchmark name of a result, with key=value parts
// so that benchstat can put the implementations side by side
// (benchstat -col /impl): BenchmarkDecode/wire=openai-chat/impl=ocbench.
// The stage becomes the benchmark's name (repair-openclaw:
// BenchmarkRepairOpenclaw); the input's key says what the input is.
func BenchfmtName(r Result) string {
	var b strings.Builder
	b.WriteString("Benchmark")
	for _, part := range strings.FieldsFunc(r.Stage, func(c rune) bool { return c == '-' || c == '_' || c == ' ' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	key := "input"
	switch r.Stage {
	case "decode", "chain", "decode+chain":
		key = "wire"
	case "tokenize", "tokenize-cached":
		key = "encoding"
	}
	clean := func(s string) string { return strings.NewReplacer(" ", "_", "/", "_", "=", "_").Replace(s) }
	fmt.Fprintf(&b, "/%s=%s/impl=%s", key, clean(r.Input), clean(r.Impl))
	return b.String()
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func fmtDur(ns float64) string {
	switch {
	case ns <= 0:
		return "-"
	case ns < 1e3:
		return fmt.Sprintf("%.0fns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.2fµs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.2fms", ns/1e6)
	}
	return fmt.Sprintf("%.2fs", ns/1e9)
}

func fmtNum(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func fmtCount(v float64) string {
	switch {
	case v <= 0:
		return "-"
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtAllocs(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2g", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtBytes(v float64) string {
	switch {
	case v >= 1<<20:
		return fmt.Sprintf("%.1fMiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1fKiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f", v)
}
