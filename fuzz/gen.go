// Package fuzz hardens the stream pipeline against malformed tool calls.
//
// It owns the generator of malformed tool calls — valid calls mutated
// along the real quirk catalogue (spec wire-and-cache §1.5, applied by
// provider/scripted's Malform) and split into deltas at random points in
// each wire format — and the runner behind `ocbench fuzz`, which pushes
// every case through decoding and the whole decorator chain and checks the
// invariants: arguments handed to a tool are always a JSON object, repair
// never adds a key or a value that the model did not send, a call cut short
// is never executed, the superset rule between the openclaw and extended
// profiles holds, and nothing panics or hangs. Failing cases are written
// out as bodies that `ocbench replay` reproduces.
//
// The differential run (Against) compares ocbench's openclaw profile with
// any implementation of the replay contract, OpenClaw itself first, on the
// generator's cases or on mutants (GenerateMutant): recorded and generated
// bodies broken the ways upstreams break them, at the SSE and JSON level.
//
// The native fuzz targets of each parser stay beside their code
// (provider, streamwrap, streamwrap/repair, transcript, prompt), where
// `go test -fuzz` finds them; this package gathers the end-to-end one.
package fuzz

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/provider"
	"github.com/ocbench/ocbench/provider/scripted"
	"github.com/ocbench/ocbench/provider/wireenc"
)

// Case is one generated turn: what the model meant, what it sent, and the
// wire body that carries it.
type Case struct {
	Seed  uint64
	Index uint64
	Wire  provider.Wire
	// Tools is the live allowlist (the registered tool names).
	Tools []string
	// HTMLEntities marks a model whose arguments arrive entity-encoded.
	HTMLEntities bool
	// Reasoning marks a reasoning model (model.reasoning): OpenAI-chat
	// reasoning deltas are kept.
	Reasoning bool
	Calls     []Call
	// Cut is set when the body ends inside a call's arguments (the stream
	// dies), Length when the turn ends with stop reason length right after
	// an unfinished call (the output limit).
	Cut    bool
	Length bool
	Body   []byte
	// Variant lists what GenerateVariant changed (empty for Generate), or
	// for a mutant its origin and mutations.
	Variant []string
	// Mutant marks a case of GenerateMutant; Model is the model id it is
	// replayed with (empty: Request's own).
	Mutant bool
	Model  string
}

// Call is one generated tool call.
type Call struct {
	Name     string // the registered name the model meant
	SentName string
	Args     string // the valid arguments the model meant
	SentArgs string
	Quirks   []scripted.Quirk
}

// argQuirks are the argument malformations the generator draws from.
// HTML entities are drawn only for cases that flag the encoding, as a
// provider flag gates their decoding.
var argQuirks = []scripted.Quirk{
	scripted.QuirkTrailingComma, scripted.QuirkFence, scripted.QuirkDoubleEncode, scripted.QuirkPython,
	scripted.QuirkSingleQuotes, scripted.QuirkConcat, scripted.QuirkNull, scripted.QuirkEmpty,
}

var toolNames = []string{"read", "write", "edit", "exec", "ls", "get_weather", "search_files", "web_fetch"}

var keys = []string{"path", "content", "command", "old_string", "new_string", "city", "query", "limit", "flag", "items", "options", "url"}

var words = []string{"a.txt", "src/main.go", "Paris", "hello world", `say "hi"`, `C:\temp\x`, "line1\nline2", "tab\there",
	"東京", "café", "emoji 🚀", "<html>&amp;", "", "    indented", "{not json}", "[1,2]", "true", "null", "100%"}

// Generate returns case i of the run with seed: deterministic, so a run
// is reproduced from its seed alone.
func Generate(seed, i uint64) *Case { return generate(seed, i, false) }

func generate(seed, i uint64, variant bool) *Case {
	r := rand.New(rand.NewPCG(seed, i))
	c := &Case{Seed: seed, Index: i, Wire: provider.Wire(r.IntN(3))}
	c.Tools = append(c.Tools, toolNames[:2+r.IntN(len(toolNames)-2)]...)
	c.HTMLEntities = r.IntN(8) == 0
	n := 1
	if r.IntN(4) == 0 {
		n = 2 + r.IntN(2)
	}
	var calls []scripted.Call
	for k := 0; k < n; k++ {
		call := Call{Name: c.Tools[r.IntN(len(c.Tools))], Args: randomArgs(r)}
		call.SentName, call.SentArgs = call.Name, call.Args
		// Name quirks: padding or a namespace, sometimes.
		switch r.IntN(6) {
		case 0:
			call.Quirks = append(call.Quirks, scripted.QuirkPadName)
		case 1:
			call.Quirks = append(call.Quirks, scripted.QuirkNamespace)
		}
		// Argument quirks: none in a third of the calls, else one or two.
		if r.IntN(3) != 0 {
			q := argQuirks[r.IntN(len(argQuirks))]
			call.Quirks = append(call.Quirks, q)
			if r.IntN(4) == 0 && q != scripted.QuirkNull && q != scripted.QuirkEmpty {
				call.Quirks = append(call.Quirks, argQuirks[r.IntN(5)])
			}
		}
		if c.HTMLEntities {
			call.Quirks = append(call.Quirks, scripted.QuirkHTMLEntities)
		}
		call.SentName = scripted.MalformName(call.SentName, call.Quirks...)
		call.SentArgs = scripted.Malform(call.SentArgs, call.Quirks...)
		c.Calls = append(c.Calls, call)
		calls = append(calls, scripted.Call{ID: "call_" + strconv.Itoa(k+1), Name: call.SentName, Args: call.SentArgs})
	}
	// Index quirks on parallel calls (a proxy numbering every call 0, a
	// server sending none).
	// They come from servers that send calls one after the other: with the
	// deltas of two calls interleaved under one index (or none), no reader
	// could tell them apart, so the generator never asks for that.
	indexQuirk := n > 1 && r.IntN(4) == 0
	if indexQuirk {
		if r.IntN(2) == 0 {
			calls[1].ReuseIndex = true
		} else {
			calls[1].NoIndex = true
		}
	}
	turn := scripted.Turn{Usage: llm.Usage{Input: 100, Output: 50}}
	if r.IntN(2) == 0 {
		turn.Steps = append(turn.Steps, scripted.Text(words[r.IntN(len(words))]).Chunked(1+r.IntN(8)))
	}
	step := scripted.Parallel(calls...)
	step.Interleave = !indexQuirk && r.IntN(2) == 0
	step.Chunk = 1 + r.IntN(12)
	turn.Steps = append(turn.Steps, step)
	// Truncation: the body dies inside the last call, or the turn ends on
	// the output limit with the call unfinished.
	if last := &calls[len(calls)-1]; len(last.Args) > 4 && r.IntN(6) == 0 {
		if r.IntN(2) == 0 {
			c.Cut = true
			last.Cut = 1 + r.IntN(len(last.Args)-2)
		} else {
			c.Length = true
			last.Args = last.Args[:cutPoint(last.Args, r)]
			c.Calls[len(c.Calls)-1].SentArgs = last.Args
			turn.Stop = llm.StopLength
		}
	}
	step.Calls = calls
	turn.Steps[len(turn.Steps)-1] = step
	var v *rand.Rand
	if variant {
		v = rand.New(rand.NewPCG(seed^variantSalt, i))
		c.variantTurn(v, &turn)
	}
	c.Body = scripted.Render(nil, c.Wire, wireenc.Meta{ID: "fuzz-" + strconv.FormatUint(i, 10), Model: "fuzz-1", Created: 1}, &turn)
	if variant {
		c.variantBody(v)
	}
	return c
}

// cutPoint picks where a length stop cuts text: inside it, on a UTF-8
// boundary, never at its end.
func cutPoint(s string, r *rand.Rand) int {
	n := 1 + r.IntN(len(s)-1)
	for n > 1 && s[n]&0xC0 == 0x80 {
		n--
	}
	return n
}

// randomArgs builds a valid JSON object of 1-5 members, some nested.
func randomArgs(r *rand.Rand) string {
	var b strings.Builder
	writeObject(&b, r, 0)
	return b.String()
}

func writeObject(b *strings.Builder, r *rand.Rand, depth int) {
	b.WriteByte('{')
	n := 1 + r.IntN(5)
	used := map[string]bool{}
	sep := [...]string{",", ", ", ",\n  "}[r.IntN(3)]
	first := true
	for k := 0; k < n; k++ {
		key := keys[r.IntN(len(keys))]
		if used[key] {
			continue
		}
		used[key] = true
		if !first {
			b.WriteString(sep)
		}
		first = false
		b.Write(llm.AppendJSONString(nil, key))
		b.WriteString([...]string{":", ": "}[r.IntN(2)])
		writeValue(b, r, depth)
	}
	b.WriteByte('}')
}

func writeValue(b *strings.Builder, r *rand.Rand, depth int) {
	switch k := r.IntN(10); {
	case k < 5:
		b.Write(llm.AppendJSONString(nil, words[r.IntN(len(words))]))
	case k == 5:
		b.WriteString(strconv.Itoa(r.IntN(2000) - 10))
	case k == 6:
		b.WriteString([...]string{"true", "false", "null", "3.25"}[r.IntN(4)])
	case k == 7 && depth < 2:
		writeObject(b, r, depth+1)
	case k == 8 && depth < 2:
		b.WriteByte('[')
		m := r.IntN(4)
		for j := 0; j < m; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			writeValue(b, r, depth+1)
		}
		b.WriteByte(']')
	default:
		b.Write(llm.AppendJSONString(nil, strings.Repeat(words[r.IntN(len(words))], 1+r.IntN(3))))
	}
}
