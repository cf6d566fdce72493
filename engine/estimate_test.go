package engine

import (
	"math"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

// estimateMessage builds a message from fuzz inputs: a role, block kinds
// (one byte per block, cycling through text, thinking, tool call, image)
// and the texts, names and arguments they carry.
func estimateMessage(role uint8, kinds []byte, text, name, args string, cost float64) *llm.Message {
	m := &llm.Message{Role: llm.Role(role % 4)}
	m.Usage.Cost.Total, m.Usage.Cost.Input = cost, cost
	for _, k := range kinds {
		switch k % 4 {
		case 0:
			m.Content = append(m.Content, llm.Block{Type: llm.BlockText, Text: []byte(text)})
		case 1:
			m.Content = append(m.Content, llm.Block{Type: llm.BlockThinking, Text: []byte(text), Redacted: k&8 != 0})
		case 2:
			m.Content = append(m.Content, llm.Block{Type: llm.BlockToolCall, ID: []byte("c1"), Name: []byte(name), Arguments: []byte(args)})
		case 3:
			m.Content = append(m.Content, llm.Block{Type: llm.BlockImage, Text: []byte("aGk="), MimeType: []byte("image/png")})
		}
	}
	return m
}

// FuzzEstimateTokens: counting on the message gives exactly what the
// estimator gives on the message's transcript JSON, for any texts
// (invalid UTF-8, escapes, line separators, astral characters), any
// arguments (not JSON, JSON that only compaction makes valid, nested
// values with escapes) and any cost.
func FuzzEstimateTokens(f *testing.F) {
	f.Add(uint8(1), []byte{0, 1, 2}, "hello", "read", `{"path":"a.txt"}`, 0.0)
	f.Add(uint8(1), []byte{2}, "", "x", "[1\n2]", 0.0)
	f.Add(uint8(1), []byte{2}, "", "x", "{} x", 0.0)
	f.Add(uint8(1), []byte{2}, "", "x", "", 0.0)
	f.Add(uint8(1), []byte{2, 2}, "", "x", `{"a":"\u00e9\ud83d\ude00","b":[1, 2.50, true,null]}`, 0.0)
	f.Add(uint8(1), []byte{0}, "a\xffb\xed\xa0\x80c\u2028\U0001F600\x01", "x", "", 0.0)
	f.Add(uint8(1), []byte{0}, "text", "x", "", math.NaN())
	f.Add(uint8(1), []byte{0}, "text", "x", "", math.Inf(1))
	f.Add(uint8(2), []byte{0, 3, 3, 1, 2}, "result", "x", "{}", 0.0)
	f.Add(uint8(0), []byte{0, 1, 2, 3}, "question", "x", "{}", 0.0)
	f.Add(uint8(3), []byte{0}, "other", "x", "{}", 0.0)
	f.Add(uint8(1), []byte{2}, "", "n\"ame", "\"str\\\"ing\"", 1.5)
	f.Fuzz(func(t *testing.T, role uint8, kinds []byte, text, name, args string, cost float64) {
		if len(kinds) > 16 {
			kinds = kinds[:16]
		}
		m := estimateMessage(role, kinds, text, name, args, cost)
		got, _ := EstimateTokens(m, nil)
		want, _ := estimateTokensJSON(m, nil)
		if got != want {
			t.Fatalf("on the message %d tokens, on its JSON %d (%q)", got, want, m.AppendJSON(nil))
		}
		// The run's one pass over the history for both estimates.
		if tokens, guard, _ := estimateBoth(m, nil); tokens != got || guard != guardChars(m) {
			t.Fatalf("estimateBoth: %d tokens, guard %d; apart %d, %d (%q)", tokens, guard, got, guardChars(m), m.AppendJSON(nil))
		}
	})
}

// TestEstimateTokensNoAllocation: the preemptive estimate of a history
// costs no allocation once its scratch buffer has grown.
func TestEstimateTokensNoAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	hist := []llm.Message{
		*estimateMessage(0, []byte{0}, "a question", "", "", 0),
		*estimateMessage(1, []byte{0, 1, 2}, "an answer", "read", `{"path":"notes.txt","limit":10}`, 0.25),
		*estimateMessage(2, []byte{0}, "the file", "", "", 0),
	}
	var buf []byte
	run := func() {
		for i := range hist {
			_, buf = EstimateTokens(&hist[i], buf)
		}
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("%.1f allocations per estimate of 3 messages", n)
	}
}
