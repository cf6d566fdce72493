package transcript

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

// prepHistory builds a history from fuzz bytes, two per message, with
// everything Prepare's steps act on: blank, heartbeat and compaction
// summary user turns, calls with odd ids, names and arguments, thinking,
// failed and empty assistant turns, heartbeat acks, transcript-only
// notices, results of any id, oversized results.
func prepHistory(b []byte) []llm.Message {
	var msgs []llm.Message
	ids := [...]string{"toolu_1", "toolu1", "c:2", "", " ", "toolu_1:2"}
	for i := 0; i+1 < len(b) && len(msgs) < 60; i += 2 {
		k, v := b[i]%16, int(b[i+1])
		id := ids[v%len(ids)]
		switch k {
		case 0, 1:
			msgs = append(msgs, llm.TextMessage(llm.RoleUser, "q"+strconv.Itoa(v)))
		case 2:
			texts := [...]string{" ", DefaultHeartbeatPrompt, HeartbeatPollPlaceholder, CompactionSummaryPrefix + "s</summary>"}
			msgs = append(msgs, llm.TextMessage(llm.RoleUser, texts[v%len(texts)]))
		case 3, 4, 5:
			m := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Usage: llm.Usage{Input: int64(v)}}
			if v&1 != 0 {
				m.Content = append(m.Content, llm.Block{Type: llm.BlockThinking, Text: []byte("t")})
			}
			names := [...]string{"read", " read ", "bad name", "", "exec"}
			args := [...]string{`{}`, ``, `null`, `{"a":1}`}
			for c := 0; c <= v>>6; c++ {
				m.Content = append(m.Content, llm.Block{Type: llm.BlockToolCall, ID: []byte(ids[(v+c)%len(ids)]),
					Name: []byte(names[(v>>2+c)%len(names)]), Arguments: []byte(args[(v>>3+c)%len(args)])})
			}
			if k == 5 {
				m.StopReason = [...]llm.StopReason{llm.StopError, llm.StopAborted, llm.StopStop}[v%3]
			}
			msgs = append(msgs, m)
		case 6, 7, 8:
			text := "r" + strconv.Itoa(v)
			if v%17 == 0 {
				text = strings.Repeat("x", 3000)
			}
			r := llm.TextMessage(llm.RoleToolResult, text)
			r.ToolCallID = id
			if v&8 != 0 {
				r.ToolName = "read"
			}
			msgs = append(msgs, r)
		case 9, 10, 11:
			texts := [...]string{"a" + strconv.Itoa(v), "HEARTBEAT_OK", ""}
			m := llm.TextMessage(llm.RoleAssistant, texts[v%len(texts)])
			m.StopReason = llm.StopStop
			if v%5 == 0 {
				m.Content = nil
				m.StopReason = [...]llm.StopReason{llm.StopError, llm.StopStop}[v%2]
			}
			msgs = append(msgs, m)
		case 12:
			m := llm.TextMessage(llm.RoleAssistant, "mirror")
			m.Provider, m.Model = "openclaw", "delivery-mirror"
			msgs = append(msgs, m)
		default:
			// The common shape: a question and its answer.
			a := llm.TextMessage(llm.RoleAssistant, "answer"+strconv.Itoa(v))
			a.StopReason = llm.StopStop
			msgs = append(msgs, llm.TextMessage(llm.RoleUser, "q"), a)
		}
	}
	return msgs
}

var preparerAPIs = [...]llm.API{"anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai", "bedrock-converse-stream", ""}

// checkPreparer prepares msgs growing by the parts cuts give, as a live
// session does (Extend, else Prepare of the whole), and fails where the
// Preparer's history or report differs from Prepare of the same messages.
// It returns how many extensions held.
func checkPreparer(t *testing.T, msgs []llm.Message, cuts []int, opts PrepareOptions) int {
	t.Helper()
	var pr Preparer
	held := 0
	prev := 0
	for _, c := range append(cuts, len(msgs)) {
		c = min(max(c, prev), len(msgs))
		var got []llm.Message
		var grep PrepareReport
		ok := false
		if prev > 0 {
			got, grep, ok = pr.Extend(msgs[prev:c], opts)
		}
		if ok {
			held++
		} else {
			got, grep = pr.Prepare(msgs[:c], opts)
		}
		want, wrep := Prepare(msgs[:c], opts)
		if grep == wrep && reflect.DeepEqual(got, want) {
			// Equal (the printed comparison below also takes a nil and an
			// empty slice for the same).
		} else if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w || grep != wrep {
			t.Fatalf("api %q, messages %d..%d (extended: %v):\n got %s\n     %+v\nwant %s\n     %+v", opts.Policy.API, prev, c, ok, g, grep, w, wrep)
		}
		// A caller may append to what it got: the next part must not see it.
		if len(got) < cap(got) {
			got = append(got, llm.TextMessage(llm.RoleUser, "appended by the caller"))
		}
		prev = c
	}
	return held
}

func preparerOptions(api llm.API, allowed bool) PrepareOptions {
	pol := PolicyForAPI(api)
	if allowed {
		pol.AllowedToolNames = []string{"read", "exec"}
	}
	return PrepareOptions{Policy: pol, Now: func() int64 { return 42 }, ToolResultMaxChars: 2500}
}

// FuzzPreparer: a history prepared part by part (Extend) is the history
// Prepare gives of the whole, for every API's policy.
func FuzzPreparer(f *testing.F) {
	f.Add([]byte{0, 1, 3, 7, 6, 7, 9, 1, 0, 2, 13, 4, 13, 5}, uint8(3), uint8(6))
	f.Add([]byte{2, 1, 9, 1, 3, 0, 9, 3, 6, 0, 2, 2, 11, 5}, uint8(2), uint8(4))
	f.Add([]byte{13, 0, 3, 200, 6, 1, 6, 2, 10, 3, 2, 3, 13, 9}, uint8(1), uint8(5))
	f.Fuzz(func(t *testing.T, b []byte, c1, c2 uint8) {
		msgs := prepHistory(b)
		cuts := []int{int(c1) % (len(msgs) + 1), int(c1)%(len(msgs)+1) + int(c2)%8}
		for _, api := range preparerAPIs {
			checkPreparer(t, msgs, cuts, preparerOptions(api, c2&1 != 0))
		}
	})
}

// TestPreparerExtends: on random histories cut at random places, Extend
// holds often (the test would pass vacuously otherwise) and gives what
// Prepare gives; a live conversation of questions, tool calls and answers
// extends every time.
func TestPreparerExtends(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	held, histories := 0, 600
	if raceEnabled {
		histories = 100
	}
	for range histories {
		b := make([]byte, 2*(1+rng.IntN(40)))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		msgs := prepHistory(b)
		cuts := []int{rng.IntN(len(msgs) + 1), rng.IntN(len(msgs) + 1), rng.IntN(len(msgs) + 1)}
		if cuts[1] < cuts[0] {
			cuts[0], cuts[1] = cuts[1], cuts[0]
		}
		for _, api := range preparerAPIs {
			held += checkPreparer(t, msgs, cuts, preparerOptions(api, rng.IntN(2) == 0))
		}
	}
	t.Logf("Extend held %d times in %d histories", held, histories*len(preparerAPIs))
	if held < histories {
		t.Fatalf("Extend held %d times in %d histories", held, histories*len(preparerAPIs))
	}
	// A conversation that goes on run after run: each run adds a question,
	// a call, its result and an answer.
	var conv []byte
	var cuts []int
	for i := range 50 {
		conv = append(conv, 0, byte(i), 3, byte(4*i%64), 6, byte(4*i%64), 13, byte(i))
		cuts = append(cuts, len(prepHistory(conv)))
	}
	msgs := prepHistory(conv)
	for _, api := range preparerAPIs {
		if n := checkPreparer(t, msgs, cuts[:len(cuts)-1], preparerOptions(api, true)); n != len(cuts)-1 {
			t.Errorf("api %q: %d of %d runs extended", api, n, len(cuts)-1)
		}
	}
}

// TestPreparerRefusesOtherOptions: Extend with options other than the
// last Prepare's (the clock aside) refuses, and a history limit never
// extends.
func TestPreparerRefusesOtherOptions(t *testing.T) {
	msgs := prepHistory([]byte{13, 1, 13, 2, 13, 3})
	opts := preparerOptions("anthropic-messages", true)
	var pr Preparer
	pr.Prepare(msgs[:2], opts)
	other := opts
	other.Policy.AllowedToolNames = []string{"read"}
	if _, _, ok := pr.Extend(msgs[2:4], other); ok {
		t.Fatal("Extend took other allowed tools")
	}
	pr.Prepare(msgs[:2], opts)
	opts.Now = func() int64 { return 7 }
	if _, _, ok := pr.Extend(msgs[2:4], opts); !ok {
		t.Fatal("Extend refused another clock")
	}
	opts.HistoryLimit = 2
	pr.Prepare(msgs[:4], opts)
	if _, _, ok := pr.Extend(msgs[4:], opts); ok {
		t.Fatal("Extend held under a history limit")
	}
}
