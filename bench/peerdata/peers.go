package peerdata

import (
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ocbench/ocbench/tokenize"
)

// PeerBench is one peer benchmark: the peer Impl on the Input of one
// Stage, the very input of ocbench's scenario Stage/Input.
type PeerBench struct {
	Stage, Input, Impl string
}

// Name is the scenario name the benchmark is compared under.
func (p PeerBench) Name() string { return p.Stage + "/" + p.Input }

// PeerPackage is one package of the peers module, compiled into its own
// test binary, so that a run builds only what it measures.
type PeerPackage struct {
	// Dir is the package directory under peers/.
	Dir string
	// Heavy names the SDK package whose compilation dominates (gigabytes
	// of compiler memory and minutes the first time); empty for the rest.
	// A heavy package is built only on request (--peers all) or when the
	// build cache already holds that package.
	Heavy string
	// Benchmarks are exactly the BenchmarkPeers sub-benchmarks of the
	// package, which iterates this very list.
	Benchmarks []PeerBench
	// ColdBuild is the package's build time on an empty build cache,
	// measured on a quiet 2-core machine: the first estimate of a run's
	// progress before the build cache has been looked at.
	ColdBuild time.Duration
	// Optional packages may be absent from a clone (they land separately);
	// a run skips an absent one.
	Optional bool
}

// The peers' names in benchmark lines ('/' separates a name's parts, so a
// repository's slash is a dash).
const (
	ImplOpenAIGo     = "openai-go"
	ImplAnthropicGo  = "anthropic-sdk-go"
	ImplStdlib       = "bufio+json"
	ImplEncodingJSON = "encoding-json"
	ImplKaptinlin    = "kaptinlin-jsonrepair"
	ImplPkoukk       = "pkoukk-tiktoken-go"
	ImplFastjson     = "fastjson"
	ImplSonic        = "bytedance-sonic"
)

// PeerTokenizeEncodings are the encodings the tokenizer peer counts.
var PeerTokenizeEncodings = []tokenize.Encoding{tokenize.Cl100kBase, tokenize.O200kBase}

// PeerPackages returns every package of the peers module with the
// benchmarks it runs, light ones first.
func PeerPackages() []PeerPackage {
	var validate, repair, tok []PeerBench
	for _, in := range RepairInputs() {
		repair = append(repair, PeerBench{"repair", in.Name, ImplKaptinlin})
		if in.Quirk == "valid" {
			validate = append(validate, PeerBench{"validate", strings.TrimSuffix(in.Name, "-valid"), ImplEncodingJSON})
		}
	}
	for _, enc := range PeerTokenizeEncodings {
		tok = append(tok, PeerBench{"tokenize", enc.String(), ImplPkoukk})
	}
	decodeAll := func(impl string) []PeerBench {
		var bs []PeerBench
		for _, ws := range []string{"openai-chat", "anthropic", "openai-responses"} {
			bs = append(bs, PeerBench{"decode", ws, impl})
		}
		return bs
	}
	return []PeerPackage{
		{Dir: "stdlib", ColdBuild: 5 * time.Second, Benchmarks: append([]PeerBench{
			{"decode", "openai-chat", ImplStdlib},
			{"decode", "anthropic", ImplStdlib},
		}, validate...)},
		{Dir: "jsonrepair", ColdBuild: 5 * time.Second, Benchmarks: repair},
		{Dir: "tiktoken", ColdBuild: 3 * time.Second, Benchmarks: tok},
		// The plain JSON parsers (module peers/fastjson, peers/sonic: owner
		// perf); a run skips a package that is not in the clone.
		{Dir: "fastjson", ColdBuild: 5 * time.Second, Optional: true, Benchmarks: decodeAll(ImplFastjson)},
		{Dir: "sonic", ColdBuild: 30 * time.Second, Optional: true, Benchmarks: decodeAll(ImplSonic)},
		{Dir: "openairesponses", ColdBuild: 35 * time.Second, Benchmarks: []PeerBench{{"decode", "openai-responses", ImplOpenAIGo}}},
		{Dir: "openaichat", ColdBuild: 100 * time.Second, Heavy: "github.com/openai/openai-go/v3", Benchmarks: []PeerBench{{"decode", "openai-chat", ImplOpenAIGo}}},
		{Dir: "anthropicsdk", ColdBuild: 100 * time.Second, Heavy: "github.com/anthropics/anthropic-sdk-go/v2", Benchmarks: []PeerBench{{"decode", "anthropic", ImplAnthropicGo}}},
	}
}

// PeerPackagesIn returns the packages of PeerPackages present in the peers
// module at dir (an optional package may not be there yet).
func PeerPackagesIn(dir string) []PeerPackage {
	var out []PeerPackage
	for _, p := range PeerPackages() {
		if p.Optional {
			if m, _ := filepath.Glob(filepath.Join(dir, p.Dir, "*_test.go")); len(m) == 0 {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// PeerPackageIn returns the package of PeerPackages at dir.
func PeerPackageIn(dir string) (PeerPackage, bool) {
	for _, p := range PeerPackages() {
		if p.Dir == dir {
			return p, true
		}
	}
	return PeerPackage{}, false
}

// Select keeps the benchmarks whose name matches filter (all when nil).
func (p PeerPackage) Select(filter *regexp.Regexp) []PeerBench {
	if filter == nil {
		return p.Benchmarks
	}
	var out []PeerBench
	for _, b := range p.Benchmarks {
		if filter.MatchString(b.Name()) {
			out = append(out, b)
		}
	}
	return out
}
